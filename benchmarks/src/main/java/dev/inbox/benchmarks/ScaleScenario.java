package dev.inbox.benchmarks;

import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 *
 * <p>On {@link Storage#PARTITIONED} the rows are spread over {@code generations} generations, as
 * the janitor leaves them: each generation's rows were completed while it was the write generation,
 * the newest started less than a quarter of the retention ago (no rotation during the claims) and
 * none is due for retirement. The purge is then the library's retention: a generation of expired
 * rows, whose successor (the live rows) started more than the retention ago, retired by {@link
 * dev.inbox.InboxAdmin#purgeExpired}, its steps timed by {@link RetentionPhases}.
 */
final class ScaleScenario {
  static final String SCHEMA = "bench_scale";
  private static final String SCOPE = ScaleFill.SCOPE;
  private static final String TABLE = "\"" + SCHEMA + "\".\"inbox\"";
  private static final String LIVE = "now() - make_interval(secs => g % 82800)";
  private static final String EXPIRED =
      "now() - interval '25 hours' - make_interval(secs => g % 3600)";

  /** The live rows' 23 hours, which the generations of the claims' table share. */
  private static final long LIVE_SECONDS = 82_800;

  private static final double BLOCKED_MS = 50;

  private final DataSource dataSource;
  private final List<Long> sizes;
  private final int claims;
  private final long purgeRows;
  private final Storage storage;
  private final int claimers;
  private final int generations;
  private final ScaleFill fill;

  ScaleScenario(DataSource dataSource, List<Long> sizes, int claims, long purgeRows) {
    this(dataSource, sizes, claims, purgeRows, Storage.TABLE, 1, 1);
  }

  /**
   * @param claimers threads that claim during the purge
   * @param generations of the claims' tables on {@link Storage#PARTITIONED}
   */
  ScaleScenario(
      DataSource dataSource,
      List<Long> sizes,
      int claims,
      long purgeRows,
      Storage storage,
      int claimers,
      int generations) {
    this.dataSource = dataSource;
    this.sizes = List.copyOf(sizes);
    this.claims = claims;
    this.purgeRows = purgeRows;
    this.storage = storage;
    this.claimers = claimers;
    this.generations = generations;
    this.fill = new ScaleFill(dataSource, TABLE);
  }

  /**
   * Every storage of {@code --scale-storage}, then the week of traffic ({@link SimulatedWeek}) and
   * the consumers' scaling ({@link ConsumerScaling}) when asked for.
   */
  static boolean run(BenchmarkRun run) throws Exception {
    InboxBenchmarks o = run.options;
    boolean correct = true;
    for (Storage storage : o.scaleStorages) {
      correct &=
          new ScaleScenario(
                  run.dataSource,
                  o.scaleRows,
                  o.scaleClaims,
                  o.purgeRows,
                  storage,
                  o.scaleClaimers,
                  o.scaleGenerations)
              .runAll(run);
    }
    if (o.weekRowsPerDay > 0) {
      for (Storage storage : o.scaleStorages) {
        correct &= new SimulatedWeek(run.dataSource, storage, o.weekRowsPerDay).run(run);
      }
    }
    if (!o.scaleConsumers.isEmpty()) {
      correct &= ConsumerScaling.runAll(run);
    }
    return correct;
  }

  private boolean partitioned() {
    return storage == Storage.PARTITIONED;
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
      JsonLine line =
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
              .put("correct", result.correct())
              .put("storage", storage.name().toLowerCase(Locale.ROOT));
      if (partitioned()) {
        line.put("generations", generations);
      }
      run.print(
          line.put("table_mb", result.tableBytes() / 1048576.0, 1)
              .put("index_mb", result.indexBytes() / 1048576.0, 1)
              .put("load_1m", loadAverage(), 2));
    }
    PurgeUnderLoad purge = purgeUnderLoad();
    allCorrect &= purge.correct();
    JsonLine line =
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
            .put("correct", purge.correct())
            .put("storage", storage.name().toLowerCase(Locale.ROOT))
            .put("claimers", claimers)
            .put("claims_over_50ms_during_purge", purge.blockedDuring())
            .put("claim_waits_during_purge", purge.claimWaits());
    if (partitioned()) {
      line.put("carry_over_seconds", purge.phases().get(RetentionPhases.Phase.CARRY_OVER), 3)
          .put("count_seconds", purge.phases().get(RetentionPhases.Phase.COUNT), 3)
          .put("detach_drop_seconds", purge.phases().get(RetentionPhases.Phase.DETACH), 3);
    }
    run.print(line.put("load_1m", loadAverage(), 2));
    return allCorrect;
  }

  record ClaimLatencies(
      double fillSeconds,
      double p50Ms,
      double p99Ms,
      double p999Ms,
      double maxMs,
      boolean correct,
      long tableBytes,
      long indexBytes) {}

  /** Fills the table to {@code rows}, then times {@code claims} claims after as many unmeasured. */
  ClaimLatencies claimLatencies(long rows) throws Exception {
    try (Inbox inbox = freshInbox()) {
      long start = System.nanoTime();
      fillLive(inbox, rows);
      fill.vacuumAnalyze();
      double fillSeconds = (System.nanoTime() - start) / 1e9;
      long[] bytes = sizes(dataSource);
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
          correct,
          bytes[0],
          bytes[1]);
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
      boolean correct,
      long blockedDuring,
      Map<RetentionPhases.Phase, Double> phases,
      Map<String, Long> claimWaits) {}

  /**
   * {@code purgeRows} expired rows beside as many live ones; {@code claimers} threads claim without
   * pause from a second before the purge until it ends, and every claim that overlapped the purge
   * counts.
   */
  PurgeUnderLoad purgeUnderLoad() throws Exception {
    try (Inbox inbox = freshInbox()) {
      if (partitioned()) {
        // Generation 0 expired, 1 (its successor) started more than the retention ago and holds
        // the live rows, 2 is the write generation: exactly generation 0 is due.
        startGenerations(inbox, 3);
        sql(
            "UPDATE "
                + SCHEMA
                + ".inbox_generations SET started_at = now() - CASE generation"
                + " WHEN 0 THEN interval '50 hours' WHEN 1 THEN interval '24 hours 1 minute'"
                + " ELSE interval '0' END");
        fill.rows(purgeRows, "expired", EXPIRED, 0);
        fill.rows(purgeRows, "live", LIVE, 1);
      } else {
        fill.rows(purgeRows, "expired", EXPIRED, null);
        fill.rows(purgeRows, "live", LIVE, null);
      }
      fill.vacuumAnalyze();
      List<long[]> timings = new ArrayList<>(); // {start, end} of each claim, in nanos
      AtomicBoolean stop = new AtomicBoolean();
      AtomicBoolean allNew = new AtomicBoolean(true);
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < claimers; i++) {
        Thread claimer =
            new Thread(
                () -> {
                  while (!stop.get()) {
                    long begin = System.nanoTime();
                    boolean isNew;
                    try {
                      isNew = claimOnce(inbox) >= 0;
                    } catch (RuntimeException e) {
                      // Counted as wrong, not thrown: the other claims' timings still tell.
                      e.printStackTrace();
                      isNew = false;
                    }
                    long end = System.nanoTime();
                    if (!isNew) {
                      allNew.set(false);
                    }
                    synchronized (timings) {
                      timings.add(new long[] {begin, end});
                    }
                  }
                },
                "scale-claimer-" + i);
        claimer.start();
        threads.add(claimer);
      }
      long deleted;
      long purgeStart;
      long purgeEnd;
      Map<RetentionPhases.Phase, Double> phases;
      Map<String, Long> claimWaits;
      try {
        Thread.sleep(1_000);
        try (RetentionPhases observed = new RetentionPhases(dataSource, TABLE)) {
          purgeStart = System.nanoTime();
          deleted = inbox.admin().purgeExpired();
          purgeEnd = System.nanoTime();
          phases = observed.secondsUntilNow();
          claimWaits = observed.otherStatementsWaits();
        }
      } finally {
        stop.set(true);
        for (Thread claimer : threads) {
          claimer.join();
        }
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
      long blocked = during.stream().filter(n -> n / 1e6 > BLOCKED_MS).count();
      // On the partitioned storage purgeExpired() reports the dropped rows from the partition's
      // statistics (an estimate); what is left is counted exactly on both.
      boolean correct =
          allNew.get()
              && (partitioned() || deleted == purgeRows)
              && count() == purgeRows + timings.size();
      return new PurgeUnderLoad(
          deleted,
          (purgeEnd - purgeStart) / 1e9,
          during.size(),
          percentileMs(sorted(before), 0.50),
          percentileMs(duringSorted, 0.50),
          percentileMs(duringSorted, 0.99),
          duringSorted.length == 0 ? 0 : duringSorted[duringSorted.length - 1] / 1e6,
          correct,
          blocked,
          phases,
          claimWaits);
    }
  }

  private Inbox freshInbox() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
      s.execute("CREATE SCHEMA " + SCHEMA);
    }
    return Inbox.builder().dataSource(dataSource).settings(settings(storage)).migrate(true).build();
  }

  /**
   * The scenario's inbox on {@link #SCHEMA}: the given storage, no janitor (the scenario purges).
   */
  static InboxSettings settings(Storage storage) {
    return InboxSettings.builder()
        .schema(SCHEMA)
        .storage(storage)
        .janitorInterval(Duration.ZERO)
        .build();
  }

  /**
   * {@code rows} live rows: on the plain table completed within the last 23 hours; on the
   * partitioned storage the same 23 hours cut into {@code generations} windows, each generation
   * started at its window's start and holding the rows completed in it.
   */
  private void fillLive(Inbox inbox, long rows) throws Exception {
    if (!partitioned()) {
      fill.rows(rows, "live", LIVE, null);
      return;
    }
    startGenerations(inbox, generations);
    long window = LIVE_SECONDS / generations;
    sql(
        "UPDATE "
            + SCHEMA
            + ".inbox_generations SET started_at = now() - make_interval(secs => "
            + LIVE_SECONDS
            + " - generation * "
            + window
            + ")");
    for (int g = 0; g < generations; g++) {
      long share = rows / generations + (g < rows % generations ? 1 : 0);
      fill.rows(
          share,
          "live-g" + g,
          "now() - make_interval(secs => "
              + (LIVE_SECONDS - g * window)
              + ") + make_interval(secs => g % "
              + window
              + ")",
          g);
    }
  }

  /**
   * Rotates a fresh partitioned inbox until it has {@code count} generations, through the library's
   * own pass: the write generation's start moved back by more than a quarter of the retention, then
   * {@code purgeExpired()}, which rotates and retires nothing.
   */
  void startGenerations(Inbox inbox, int count) throws SQLException {
    String table = SCHEMA + ".inbox_generations";
    for (int g = 1; g < count; g++) {
      sql(
          "UPDATE "
              + table
              + " SET started_at = started_at - interval '7 hours'"
              + " WHERE generation = (SELECT max(generation) FROM "
              + table
              + ")");
      inbox.admin().purgeExpired();
    }
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*), max(generation) FROM " + table)) {
      rs.next();
      if (rs.getInt(1) != count || rs.getInt(2) != count - 1) {
        throw new IllegalStateException(
            "expected generations 0 to "
                + (count - 1)
                + ", but "
                + table
                + " has "
                + rs.getInt(1)
                + " up to "
                + rs.getInt(2));
      }
    }
  }

  /**
   * Bytes of the table (with its TOAST and maps) and of its indexes, partitions summed, and the
   * number of its tables (partitions).
   */
  static long[] sizes(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT coalesce(sum(pg_table_size(c.oid)), 0), coalesce(sum(pg_indexes_size(c.oid)),"
                    + " 0), count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE n.nspname = '"
                    + SCHEMA
                    + "' AND c.relkind = 'r' AND c.relname ~ '^inbox(_g[0-9]+)?$'")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  private void sql(String statement) throws SQLException {
    sql(dataSource, statement);
  }

  static void sql(DataSource dataSource, String statement) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  /** The machine's load average over the last minute, from Linux's /proc; -1 where unknown. */
  static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (Exception e) {
      return -1;
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
    return count(dataSource);
  }

  static long count(DataSource dataSource) throws SQLException {
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
