package dev.inbox.cli;

import dev.inbox.AuditEntry;
import dev.inbox.InboxRecord;
import dev.inbox.KeyReport;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/** How records, reports and audit entries read: as text for a person, as JSON for a script. */
final class Records {
  /** A body longer than this is summarized in text output; JSON always carries all of it. */
  private static final int BODY_SHOWN = 512;

  private Records() {}

  /** The lease part of a record as a phrase, judged by the database's {@code now}. */
  static String lease(InboxRecord r, Instant now) {
    if (r.state() != RecordState.IN_PROGRESS) {
      return "-";
    }
    if (r.lockedUntil() == null) {
      return "none (committed without complete(): counts as completed)";
    }
    Duration left = Duration.between(now, r.lockedUntil());
    return (left.isNegative()
            ? "EXPIRED " + age(left.negated()) + " ago"
            : "live, " + age(left) + " left")
        + ", owner "
        + r.leaseOwner()
        + ", until "
        + r.lockedUntil();
  }

  /** A duration the way a person reads it: {@code 3d4h}, {@code 12m5s}, {@code 450ms}. */
  static String age(Duration d) {
    long s = d.getSeconds();
    if (s < 1) {
      return d.toMillis() + "ms";
    }
    if (s < 3600) {
      return (s / 60 > 0 ? s / 60 + "m" : "") + s % 60 + "s";
    }
    if (s < 86_400) {
      return s / 3600 + "h" + (s % 3600) / 60 + "m";
    }
    return s / 86_400 + "d" + (s % 86_400) / 3600 + "h";
  }

  static List<String> text(KeyReport report) {
    List<String> lines = new ArrayList<>();
    InboxRecord r = report.record();
    Instant now = report.databaseNow();
    line(lines, "scope", report.scope());
    line(lines, "key", report.key());
    if (r == null) {
      line(lines, "state", "no record (never claimed, rolled back, or purged)");
    } else {
      line(lines, "state", r.state().name());
      line(lines, "attempts", String.valueOf(r.attempts()));
      line(lines, "lease", lease(r, now));
      line(lines, "fencing token", String.valueOf(r.fencingToken()));
      line(lines, "fingerprint", r.fingerprint() == null ? "-" : hex(r.fingerprint()));
      line(
          lines,
          "created",
          r.createdAt() + " (" + age(Duration.between(r.createdAt(), now)) + " ago)");
      line(
          lines,
          "updated",
          r.updatedAt() + " (" + age(Duration.between(r.updatedAt(), now)) + " ago)");
      line(lines, "completed", r.completedAt() == null ? "-" : r.completedAt().toString());
      line(lines, "last error", r.lastError() == null ? "-" : r.lastError());
      StoredResult result = r.result();
      if (result == null) {
        line(lines, "result", "none stored");
      } else {
        line(lines, "result", "status " + result.status());
        result
            .headers()
            .forEach(
                (name, values) -> values.forEach(v -> line(lines, "  header", name + ": " + v)));
        line(lines, "  body", body(result));
      }
    }
    line(lines, "database now", now.toString());
    if (report.history().isEmpty()) {
      line(lines, "audit", "no operator has changed this key");
    } else {
      lines.add("audit:");
      for (AuditEntry e : report.history()) {
        lines.add(
            "  #"
                + e.id()
                + " "
                + e.at()
                + " "
                + e.action()
                + (e.forced() ? " (FORCED)" : "")
                + " by "
                + e.actor()
                + ": "
                + e.reason());
      }
    }
    return lines;
  }

  private static void line(List<String> lines, String label, String value) {
    lines.add(String.format("%-14s %s", label, value));
  }

  private static String body(StoredResult result) {
    if (!result.bodyStored()) {
      return "not stored (too large), sha256 " + hex(result.bodySha256());
    }
    byte[] body = result.body().orElseThrow();
    String text = utf8(body);
    if (text == null || text.chars().anyMatch(c -> c < 0x20 && c != '\n' && c != '\t')) {
      return body.length + " bytes, binary (see --json for base64)";
    }
    if (body.length > BODY_SHOWN) {
      return body.length + " bytes: " + text.substring(0, BODY_SHOWN / 2) + "... (see --json)";
    }
    return body.length + " bytes: " + text;
  }

  /** The bytes as UTF-8 text, or null when they are not. */
  private static String utf8(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  static String hex(byte[] bytes) {
    return bytes == null ? null : HexFormat.of().formatHex(bytes);
  }

  /** The record as JSON; the result's body as base64 only when {@code withBody}. */
  static Json json(InboxRecord r, Instant now, boolean withBody) {
    Json json =
        new Json()
            .field("scope", r.scope())
            .field("key", r.key())
            .field("state", r.state())
            .field("attempts", r.attempts())
            .field("leaseOwner", r.leaseOwner())
            .field("lockedUntil", r.lockedUntil())
            .field(
                "leaseLive",
                r.state() == RecordState.IN_PROGRESS && r.lockedUntil() != null
                    ? !r.lockedUntil().isBefore(now)
                    : null)
            .field("fencingToken", r.fencingToken())
            .field("fingerprint", hex(r.fingerprint()))
            .field("lastError", r.lastError())
            .field("createdAt", r.createdAt())
            .field("updatedAt", r.updatedAt())
            .field("completedAt", r.completedAt());
    StoredResult result = r.result();
    if (result == null) {
      return json.field("result", null);
    }
    Json stored =
        new Json()
            .field("status", result.status())
            .field("headers", result.headers())
            .field("bodyStored", result.bodyStored())
            .field("bodySha256", hex(result.bodySha256()));
    if (withBody) {
      stored.field(
          "bodyBase64", result.body().map(b -> Base64.getEncoder().encodeToString(b)).orElse(null));
    }
    return json.field("result", stored);
  }

  static Json json(KeyReport report) {
    List<Json> history = new ArrayList<>();
    for (AuditEntry e : report.history()) {
      history.add(
          new Json()
              .field("id", e.id())
              .field("at", e.at())
              .field("actor", e.actor())
              .field("reason", e.reason())
              .field("action", e.action())
              .field("forced", e.forced())
              .field("before", Json.raw(e.before()))
              .field("after", Json.raw(e.after())));
    }
    return new Json()
        .field("scope", report.scope())
        .field("key", report.key())
        .field("databaseNow", report.databaseNow())
        .field(
            "record",
            report.record() == null ? null : json(report.record(), report.databaseNow(), true))
        .field("audit", history);
  }
}
