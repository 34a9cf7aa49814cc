package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * Fills an inbox table with COMPLETED rows by {@code INSERT ... SELECT generate_series}, in chunks
 * of a million rows, one transaction each, so that 100M rows need no sort and no huge transaction.
 *
 * <p>Each key is a UUID whose first 8 hex digits grow with the row's number across the whole key
 * space (the rest is an md5 of the tag and the number): the rows of one fill are inserted in key
 * order, as the primary key wants them, yet spread over the key space as random message ids are, so
 * that random UUID claims land all over the index. The fill runs with {@code
 * session_replication_role = replica}, which skips the partitioned storage's key guard (its
 * advisory lock per row would exhaust the lock table): the keys are distinct by construction, so
 * the guard has nothing to refuse. Needs a superuser, as the benchmarks' database user is.
 */
final class ScaleFill {
  static final String SCOPE = "bench";
  private static final long CHUNK = 1_000_000;

  private final DataSource dataSource;
  private final String table;

  /**
   * @param table the schema-qualified inbox table (the parent, for the partitioned storage)
   */
  ScaleFill(DataSource dataSource, String table) {
    this.dataSource = dataSource;
    this.table = table;
  }

  /**
   * Inserts {@code rows} rows whose keys derive from the tag.
   *
   * @param completedAt SQL for each row's time, of the row's number {@code g} (1 to rows)
   * @param generation the partition's generation, or null for the plain table
   */
  void rows(long rows, String tag, String completedAt, Integer generation) throws SQLException {
    if (rows == 0) {
      return;
    }
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET session_replication_role = replica");
      try {
        for (long from = 1; from <= rows; from += CHUNK) {
          long to = Math.min(rows, from + CHUNK - 1);
          s.execute(chunk(rows, tag, completedAt, generation, from, to));
        }
      } finally {
        s.execute("RESET session_replication_role");
      }
    }
  }

  private String chunk(
      long rows, String tag, String completedAt, Integer generation, long from, long to) {
    // g * 2^32 / (rows + 1) < 2^32: eight hex digits, strictly increasing with g.
    String key =
        "lpad(to_hex(g * 4294967296 / "
            + (rows + 1)
            + "), 8, '0') || '-' || substr(h, 9, 4) || '-' || substr(h, 13, 4) || '-'"
            + " || substr(h, 17, 4) || '-' || substr(h, 21, 12)";
    return "INSERT INTO "
        + table
        + " (scope, key, state, attempts, fencing_token, created_at, updated_at, completed_at"
        + (generation == null ? "" : ", generation")
        + ") SELECT '"
        + SCOPE
        + "', "
        + key
        + ", 'COMPLETED', 1, 1, t, t, t"
        + (generation == null ? "" : ", " + generation)
        + " FROM (SELECT g, md5('"
        + tag
        + "-' || g) AS h, "
        + completedAt
        + " AS t FROM generate_series("
        + from
        + "::bigint, "
        + to
        + "::bigint) AS g) AS s";
  }

  /** {@code VACUUM ANALYZE}, as autovacuum would after a fill; recurses into partitions. */
  void vacuumAnalyze() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("VACUUM ANALYZE " + table);
    }
  }
}
