package dev.inbox.benchmarks;

import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * The {@code scale} scenario: the latency of single claims ({@link Inbox#execute} with an empty
 * handler) with the inbox table pre-filled to each size, then the time {@link Inbox#purgeExpired}
 * takes to delete expired rows while claims go on on another thread, and the longest of those
 * claims.
 *
 * <p>The pre-filled rows look like a day of traffic: {@code COMPLETED}, UUID keys, completed within
 * the last 23 hours (kept by the default 24-hour retention). They are inserted in key order, so
 * that the fill is fast, but the claims use random UUIDs and so land all over the primary key, as
 * real message ids do. The table is vacuumed and analyzed after the fill, as autovacuum would.
 */
final class ScaleScenario {
  static final String SCHEMA = "bench_scale";
  private static final String SCOPE = "bench";

  private final DataSource dataSource;
  private final List<Long> sizes;
  private final int claims;
  private final long purgeRows;

  ScaleScenario(DataSource dataSource, List<Long> sizes, int claims, long purgeRows) {
    this.dataSource = dataSource;
    this.sizes = List.copyOf(sizes);
    this.claims = claims;
    this.purgeRows = purgeRows;
  }

  boolean runAll(BenchmarkRun run) throws Exception {
    boolean allCorrect = true;
    double baselineP50 = 0;
    long baselineRows = 0;
    for (long rows : sizes) {
      ClaimLatencies result = claimLatencies(rows);
      if (baselineP50 == 0) {
        baselineP50 = result.p50Ms();
        baselineRows = rows;
      }
      allCorrect &= result.correct();
      run.print(
          JsonLine.scenario("scale")
              .put("variant", "claim")
              .put("rows", rows)
              .put("claims", claims)
              .put("fill_seconds", result.fillSeconds(), 1)
              .put("p50_ms", result.p50Ms(), 3)
              .put("p99_ms", result.p99Ms(), 3)
              .put("p999_ms", result.p999Ms(), 3)
              .put("max_ms", result.maxMs(), 3)
              .put("baseline_rows", baselineRows)
              .put("ratio_p50_vs_empty", result.p50Ms() / baselineP50, 3)
              .put("correct", result.correct()));
    }
    PurgeUnderLoad purge = purgeUnderLoad();
    allCorrect &= purge.correct();
    run.print(
        JsonLine.scenario("scale")
            .put("variant", "purge")
            .put("purge_rows", purgeRows)
            .put("live_rows", purgeRows)
            .put("deleted", purge.deleted())
            .put("purge_seconds", purge.seconds(), 3)
            .put("claims_during_purge", purge.claimsDuring())
            .put("p50_claim_ms_before_purge", purge.p50BeforeMs(), 3)
            .put("p50_claim_ms_during_purge", purge.p50DuringMs(), 3)
            .put("p99_claim_ms_during_purge", purge.p99DuringMs(), 3)
            .put("max_claim_ms_during_purge", purge.maxDuringMs(), 3)
            .put("correct", purge.correct()));
    return allCorrect;
  }

  record ClaimLatencies(
      double fillSeconds,
      double p50Ms,
      double p99Ms,
      double p999Ms,
      double maxMs,
      boolean correct) {}

  /** Fills the table to {@code rows}, then times {@code claims} claims after as many unmeasured. */
  ClaimLatencies claimLatencies(long rows) throws Exception {
    try (Inbox inbox = freshInbox()) {
      long start = System.nanoTime();
      fill(rows, "live", "now() - make_interval(secs => g % 82800)");
      double fillSeconds = (System.nanoTime() - start) / 1e9;
      // As many unmeasured claims first, so that the first size is not measured on a cold JIT.
      int warmup = claims;
      boolean allNew = true;
      for (int i = 0; i < warmup; i++) {
        allNew &= claimOnce(inbox) >= 0;
      }
      long[] nanos = new long[claims];
      for (int i = 0; i < claims; i++) {
        nanos[i] = claimOnce(inbox);
        allNew &= nanos[i] >= 0;
      }
      Arrays.sort(nanos);
      boolean correct = allNew && count() == rows + warmup + claims;
      return new ClaimLatencies(
          fillSeconds,
          percentileMs(nanos, 0.50),
          percentileMs(nanos, 0.99),
          percentileMs(nanos, 0.999),
          nanos[nanos.length - 1] / 1e6,
          correct);
    }
  }

  record PurgeUnderLoad(
      long deleted,
      double seconds,
      long claimsDuring,
      double p50BeforeMs,
      double p50DuringMs,
      double p99DuringMs,
      double maxDuringMs,
      boolean correct) {}

  /**
   * {@code purgeRows} expired rows beside as many live ones; one thread claims without pause from a
   * second before the purge until it ends, and every claim that overlapped the purge counts.
   */
  PurgeUnderLoad purgeUnderLoad() throws Exception {
    try (Inbox inbox = freshInbox()) {
      fill(purgeRows, "expired", "now() - interval '25 hours' - make_interval(secs => g % 3600)");
      fill(purgeRows, "live", "now() - make_interval(secs => g % 82800)");
      List<long[]> timings = new ArrayList<>(); // {start, end} of each claim, in nanos
      AtomicBoolean stop = new AtomicBoolean();
      AtomicBoolean allNew = new AtomicBoolean(true);
      Thread claimer =
          new Thread(
              () -> {
                while (!stop.get()) {
                  long begin = System.nanoTime();
                  boolean isNew = claimOnce(inbox) >= 0;
                  long end = System.nanoTime();
                  if (!isNew) {
                    allNew.set(false);
                  }
                  synchronized (timings) {
                    timings.add(new long[] {begin, end});
                  }
                }
              },
              "scale-claimer");
      claimer.start();
      long deleted;
      long purgeStart;
      long purgeEnd;
      try {
        Thread.sleep(1_000);
        purgeStart = System.nanoTime();
        deleted = inbox.admin().purgeExpired();
        purgeEnd = System.nanoTime();
      } finally {
        stop.set(true);
        claimer.join();
      }
      List<Long> before = new ArrayList<>();
      List<Long> during = new ArrayList<>();
      for (long[] t : timings) {
        if (t[1] <= purgeStart) {
          before.add(t[1] - t[0]);
        } else if (t[0] < purgeEnd) {
          during.add(t[1] - t[0]);
        }
      }
      long[] duringSorted = sorted(during);
      boolean correct =
          allNew.get() && deleted == purgeRows && count() == purgeRows + timings.size();
      return new PurgeUnderLoad(
          deleted,
          (purgeEnd - purgeStart) / 1e9,
          during.size(),
          percentileMs(sorted(before), 0.50),
          percentileMs(duringSorted, 0.50),
          percentileMs(duringSorted, 0.99),
          duringSorted.length == 0 ? 0 : duringSorted[duringSorted.length - 1] / 1e6,
          correct);
    }
  }

  private Inbox freshInbox() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
      s.execute("CREATE SCHEMA " + SCHEMA);
    }
    InboxSettings settings =
        InboxSettings.builder().schema(SCHEMA).janitorInterval(Duration.ZERO).build();
    return Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build();
  }

  /** Inserts {@code rows} COMPLETED rows whose UUID keys derive from the tag, in key order. */
  private void fill(long rows, String tag, String completedAt) throws SQLException {
    if (rows == 0) {
      return;
    }
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      // For the sort of the fill only; the claims run with the server's settings.
      s.execute("SET work_mem = '256MB'");
      s.execute(
          "INSERT INTO "
              + SCHEMA
              + ".inbox (scope, key, state, attempts, fencing_token, created_at, updated_at,"
              + " completed_at) SELECT '"
              + SCOPE
              + "', k, 'COMPLETED', 1, 1, t, t, t FROM (SELECT md5('"
              + tag
              + "-' || g)::uuid::text AS k, "
              + completedAt
              + " AS t FROM generate_series(1, "
              + rows
              + ") g) s ORDER BY k");
      s.execute("RESET work_mem");
      s.execute("VACUUM ANALYZE " + SCHEMA + ".inbox");
    }
  }

  /** The nanos one new claim took, or -1 if the key was not new (which would be a bug here). */
  private static long claimOnce(Inbox inbox) {
    String key = UUID.randomUUID().toString();
    long start = System.nanoTime();
    boolean executed = inbox.execute(SCOPE, key, tx -> null).executed();
    long nanos = System.nanoTime() - start;
    return executed ? nanos : -1;
  }

  private long count() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + SCHEMA + ".inbox")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long[] sorted(List<Long> values) {
    long[] array = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(array);
    return array;
  }

  /** The nearest-rank percentile, in milliseconds; 0 for no values. */
  static double percentileMs(long[] sortedNanos, double quantile) {
    if (sortedNanos.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(quantile * sortedNanos.length);
    return sortedNanos[Math.max(0, Math.min(sortedNanos.length, rank) - 1)] / 1e6;
  }
}
