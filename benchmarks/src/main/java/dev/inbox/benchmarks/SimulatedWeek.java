package dev.inbox.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * A week of traffic at a fixed rate on one storage, then the table's and its indexes' size: does
 * retention keep the table at the size of the rows it keeps?
 *
 * <p>The library takes every time from the database's {@code now()}. The week runs on a clock of
 * its own: a function {@code now()} in a schema that the simulation's connections put before {@code
 * pg_catalog} on their {@code search_path}, returning the time the week started plus a shift that
 * the simulation moves an hour forward per step (simulated time stands still between steps, so that
 * the week's figures do not depend on how fast the machine runs it). Every statement of the library
 * on those connections, the plain purge's and the partitioned retention's comparisons and the
 * generations' starts among them, reads that clock; nothing else in the database is changed. Each
 * simulated hour: the hour's keys inserted as {@code execute} records them (one COMPLETED row each,
 * random UUID keys, times spread over the hour), then the janitor's {@code purgeExpired()} at the
 * hour's end. Autovacuum works on real time, which runs here a thousand times faster than the
 * simulated one, so it is emulated on simulated time instead: autovacuum off for the plain table,
 * and a {@code VACUUM} (an {@code ANALYZE}) after the hour in which the rows deleted (changed)
 * since the last passed autovacuum's default threshold, 50 + 20 % (10 %) of the live rows.
 */
final class SimulatedWeek {
  private static final String SCHEMA = ScaleScenario.SCHEMA;
  private static final String CLOCK = SCHEMA + "_clock";
  private static final String TABLE = "\"" + SCHEMA + "\".\"inbox\"";
  private static final int DAYS = 7;

  private final DataSource dataSource;
  private final Storage storage;
  private final long rowsPerDay;

  SimulatedWeek(DataSource dataSource, Storage storage, long rowsPerDay) {
    this.dataSource = dataSource;
    this.storage = storage;
    this.rowsPerDay = rowsPerDay;
  }

  /** The week's figures, day by day. */
  record Week(
      long inserted,
      long purged,
      long liveRows,
      long tableBytes,
      long indexBytes,
      long partitions,
      int vacuums,
      int analyzes,
      List<Double> totalMbByDay,
      List<Double> liveRowsByDay,
      List<Double> bytesPerRowByDay,
      double seconds) {}

  boolean run(BenchmarkRun run) throws Exception {
    Week week = simulate();
    boolean correct = week.liveRows() == week.inserted() - week.purged();
    run.print(
        JsonLine.scenario("scale")
            .put("variant", "week")
            .put("storage", storage.name().toLowerCase(Locale.ROOT))
            .put("rows_per_day", rowsPerDay)
            .put("days", DAYS)
            .put("inserted", week.inserted())
            .put("purged", week.purged())
            .put("live_rows", week.liveRows())
            .put("table_mb", week.tableBytes() / 1048576.0, 1)
            .put("index_mb", week.indexBytes() / 1048576.0, 1)
            .put("partitions", week.partitions())
            .put("vacuums", week.vacuums())
            .put("analyzes", week.analyzes())
            .put("total_mb_by_day", week.totalMbByDay(), 1)
            .put("live_rows_by_day", week.liveRowsByDay(), 0)
            .put("bytes_per_row_by_day", week.bytesPerRowByDay(), 1)
            .put("week_seconds", week.seconds(), 1)
            .put("load_1m", ScaleScenario.loadAverage(), 2)
            .put("correct", correct));
    return correct;
  }

  Week simulate() throws Exception {
    long start = System.nanoTime();
    createSchemas();
    InboxSettings settings = ScaleScenario.settings(storage);
    // Migrated on the real clock, then generation 0 moved to the simulated clock's start.
    Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build().close();
    if (storage == Storage.PARTITIONED) {
      ScaleScenario.sql(
          dataSource,
          "UPDATE "
              + SCHEMA
              + ".inbox_generations SET started_at = (SELECT base FROM "
              + CLOCK
              + ".clock)");
    }
    if (storage == Storage.TABLE) {
      ScaleScenario.sql(dataSource, "ALTER TABLE " + TABLE + " SET (autovacuum_enabled = false)");
    }
    long perHour = rowsPerDay / 24;
    long inserted = 0;
    long purged = 0;
    long deletedSinceVacuum = 0;
    long changedSinceAnalyze = 0;
    int vacuums = 0;
    int analyzes = 0;
    List<Double> totalMb = new ArrayList<>();
    List<Double> liveByDay = new ArrayList<>();
    List<Double> bytesPerRow = new ArrayList<>();
    try (HikariDataSource simulated = clockPool();
        Inbox inbox =
            Inbox.builder().dataSource(simulated).settings(settings).migrate(false).build()) {
      for (int hour = 1; hour <= DAYS * 24; hour++) {
        ScaleScenario.sql(
            simulated, "UPDATE " + CLOCK + ".clock SET shift = shift + interval '1 hour'");
        if (hour == 1) {
          requireSimulatedClock(simulated);
        }
        insertHour(simulated, perHour);
        inserted += perHour;
        long deleted = inbox.admin().purgeExpired();
        purged += deleted;
        long live = inserted - purged;
        deletedSinceVacuum += deleted;
        changedSinceAnalyze += perHour + deleted;
        if (deletedSinceVacuum > 50 + 0.2 * live) {
          ScaleScenario.sql(dataSource, "VACUUM " + TABLE);
          vacuums++;
          deletedSinceVacuum = 0;
        }
        if (changedSinceAnalyze > 50 + 0.1 * live) {
          ScaleScenario.sql(dataSource, "ANALYZE " + TABLE);
          analyzes++;
          changedSinceAnalyze = 0;
        }
        if (hour % 24 == 0) {
          long[] bytes = ScaleScenario.sizes(dataSource);
          long rows = ScaleScenario.count(dataSource);
          totalMb.add((bytes[0] + bytes[1]) / 1048576.0);
          liveByDay.add((double) rows);
          bytesPerRow.add(rows == 0 ? 0 : (bytes[0] + bytes[1]) / (double) rows);
        }
      }
    }
    long[] bytes = ScaleScenario.sizes(dataSource);
    return new Week(
        inserted,
        purged,
        ScaleScenario.count(dataSource),
        bytes[0],
        bytes[1],
        bytes[2],
        vacuums,
        analyzes,
        totalMb,
        liveByDay,
        bytesPerRow,
        (System.nanoTime() - start) / 1e9);
  }

  private void createSchemas() throws SQLException {
    ScaleScenario.sql(dataSource, "DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
    ScaleScenario.sql(dataSource, "DROP SCHEMA IF EXISTS " + CLOCK + " CASCADE");
    ScaleScenario.sql(dataSource, "CREATE SCHEMA " + SCHEMA);
    ScaleScenario.sql(dataSource, "CREATE SCHEMA " + CLOCK);
    ScaleScenario.sql(
        dataSource,
        "CREATE TABLE " + CLOCK + ".clock (base timestamptz NOT NULL, shift interval NOT NULL)");
    ScaleScenario.sql(dataSource, "INSERT INTO " + CLOCK + ".clock VALUES (now(), interval '0')");
    ScaleScenario.sql(
        dataSource,
        "CREATE FUNCTION "
            + CLOCK
            + ".now() RETURNS timestamptz LANGUAGE sql STABLE AS"
            + " $$ SELECT base + shift FROM "
            + CLOCK
            + ".clock $$");
  }

  /** The benchmark's pool again, its connections on the simulated clock. */
  private HikariDataSource clockPool() {
    if (!(dataSource instanceof HikariDataSource pool)) {
      throw new IllegalArgumentException(
          "the simulated week copies a HikariCP pool's settings, but got " + dataSource);
    }
    HikariConfig config = new HikariConfig();
    pool.copyStateTo(config);
    config.setPoolName("scale-week-clock");
    config.setConnectionInitSql("SET search_path = " + CLOCK + ", pg_catalog, public");
    return new HikariDataSource(config);
  }

  private static void requireSimulatedClock(DataSource simulated) throws SQLException {
    try (Connection c = simulated.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT now() - pg_catalog.now() >= interval '30 minutes'")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        throw new IllegalStateException(
            "now() on the simulation's connections is not the simulated clock, which indicates"
                + " a bug in the simulation");
      }
    }
  }

  /**
   * The hour's keys, completed over the hour that ends now. The key guard is skipped ({@code
   * session_replication_role = replica}; the keys are random UUIDs): it writes nothing to the
   * table.
   */
  private static void insertHour(DataSource simulated, long rows) throws SQLException {
    try (Connection c = simulated.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET session_replication_role = replica");
      try {
        s.execute(
            "INSERT INTO "
                + TABLE
                + " (scope, key, state, attempts, fencing_token, created_at, updated_at,"
                + " completed_at) SELECT '"
                + ScaleFill.SCOPE
                + "', gen_random_uuid()::text, 'COMPLETED', 1, 1, t, t, t FROM (SELECT now() -"
                + " interval '1 hour' + make_interval(secs => g * 3600.0 / "
                + rows
                + ") AS t FROM generate_series(1, "
                + rows
                + ") AS g) AS s");
      } finally {
        s.execute("RESET session_replication_role");
      }
    }
  }
}
