package dev.inbox.spring.actuate;

import dev.inbox.AuditEntry;
import dev.inbox.InboxRecord;
import dev.inbox.InboxStats;
import dev.inbox.KeyPage;
import dev.inbox.KeyReport;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The endpoint's answers as plain maps of strings, numbers and booleans, so that any JSON mapper
 * Actuator uses (Jackson 2 on Boot 3, Jackson 3 on Boot 4) writes them alike: times as ISO-8601
 * text, bytes as hex or text.
 */
final class Views {
  private Views() {}

  static Map<String, Object> stats(InboxStats stats, long purgeable) {
    List<Map<String, Object>> counts = new ArrayList<>();
    for (InboxStats.Count c : stats.counts()) {
      counts.add(
          map()
              .put("scope", c.scope())
              .put("state", c.state().name())
              .put("count", c.count())
              .put("expiredLeases", c.expiredLeases())
              .put("gaveUp", c.gaveUp())
              .done());
    }
    return map()
        .put("databaseNow", text(stats.databaseNow()))
        .put("counts", counts)
        .put("oldestLease", text(stats.oldestLease()))
        .put("tableBytes", stats.tableBytes())
        .put("lastPurgeAt", text(stats.lastPurgeAt()))
        .put("lastPurgeDeleted", stats.lastPurgeDeleted())
        .put("purgeableNow", purgeable)
        .done();
  }

  static Map<String, Object> page(KeyPage page) {
    List<Map<String, Object>> records = new ArrayList<>();
    page.records().forEach(r -> records.add(record(r, page.databaseNow(), false)));
    return map()
        .put("databaseNow", text(page.databaseNow()))
        .put("records", records)
        .put("next", page.next())
        .done();
  }

  static Map<String, Object> report(KeyReport report) {
    List<Map<String, Object>> history = new ArrayList<>();
    report.history().forEach(entry -> history.add(audit(entry)));
    return map()
        .put("scope", report.scope())
        .put("key", report.key())
        .put("databaseNow", text(report.databaseNow()))
        .put(
            "record",
            report.record() == null ? null : record(report.record(), report.databaseNow(), true))
        .put("history", history)
        .done();
  }

  /** A record; {@code withBody} adds the stored body, which a listing leaves out. */
  static Map<String, Object> record(InboxRecord r, Instant now, boolean withBody) {
    return map()
        .put("scope", r.scope())
        .put("key", r.key())
        .put("state", r.state().name())
        .put("attempts", r.attempts())
        .put("leaseOwner", r.leaseOwner())
        .put("lockedUntil", text(r.lockedUntil()))
        .put("leaseLive", leaseLive(r, now))
        .put("fencingToken", r.fencingToken())
        .put("fingerprint", hex(r.fingerprint()))
        .put("createdAt", text(r.createdAt()))
        .put("updatedAt", text(r.updatedAt()))
        .put("completedAt", text(r.completedAt()))
        .put("lastError", r.lastError())
        .put("result", r.result() == null ? null : result(r.result(), withBody))
        .done();
  }

  static boolean leaseLive(InboxRecord r, Instant now) {
    return r.state() == RecordState.IN_PROGRESS
        && r.lockedUntil() != null
        && !r.lockedUntil().isBefore(now);
  }

  private static Map<String, Object> result(StoredResult result, boolean withBody) {
    Builder view =
        map()
            .put("status", result.status())
            .put("headers", result.headers())
            .put("bodyStored", result.bodyStored())
            .put("bodySha256", hex(result.bodySha256()));
    if (withBody && result.bodyStored()) {
      byte[] body = result.body().orElseThrow();
      String utf8 = utf8(body);
      // Text reads as text; anything else (an image, a protobuf) survives as Base64.
      view.put(utf8 != null ? "body" : "bodyBase64", utf8 != null ? utf8 : base64(body));
    }
    return view.done();
  }

  private static Map<String, Object> audit(AuditEntry e) {
    return map()
        .put("id", e.id())
        .put("at", text(e.at()))
        .put("actor", e.actor())
        .put("reason", e.reason())
        .put("action", e.action())
        .put("forced", e.forced())
        .put("before", e.before())
        .put("after", e.after())
        .done();
  }

  /** The bytes as text when they are valid UTF-8 (decoding them back gives the same bytes). */
  private static String utf8(byte[] bytes) {
    String text = new String(bytes, StandardCharsets.UTF_8);
    return Arrays.equals(text.getBytes(StandardCharsets.UTF_8), bytes) ? text : null;
  }

  private static String base64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }

  private static String hex(byte[] bytes) {
    return bytes == null ? null : HexFormat.of().formatHex(bytes);
  }

  private static String text(Instant instant) {
    return instant == null ? null : instant.toString();
  }

  static Builder map() {
    return new Builder();
  }

  /** A map in insertion order that keeps null values, which {@code Map.of} refuses. */
  static final class Builder {
    private final Map<String, Object> map = new LinkedHashMap<>();

    Builder put(String name, Object value) {
      map.put(name, value);
      return this;
    }

    Map<String, Object> done() {
      return map;
    }
  }
}
