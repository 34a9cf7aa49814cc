package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Looks at and fills a test's inbox table from below the API, on a connection the test holds.
 * Public so that the engine's tests in {@code dev.inbox.internal} use it too.
 */
public final class InboxTable {
  private InboxTable() {}

  /**
   * What a transaction has done to the inbox table so far, as PostgreSQL counts it for that
   * transaction alone ({@code pg_stat_xact_user_tables}).
   *
   * @param sequentialScans scans of the whole table, which a lookup by key must never need
   * @param updates rows updated
   * @param heapOnlyUpdates updates that added no index entry (HOT)
   */
  public record Counters(long sequentialScans, long updates, long heapOnlyUpdates) {}

  /** The counters of the transaction open on {@code transaction}, read before it ends. */
  public static Counters counters(Connection transaction, String schema) throws SQLException {
    try (PreparedStatement ps =
        transaction.prepareStatement(
            "SELECT seq_scan, n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables"
                + " WHERE schemaname = ? AND relname = 'inbox'")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the inbox table has statistics in this transaction").isTrue();
        return new Counters(rs.getLong(1), rs.getLong(2), rs.getLong(3));
      }
    }
  }

  /**
   * Makes PostgreSQL plan every statement of this connection generically from its first server-side
   * prepare, so that a cached plan is made on the table as it is now; {@link #handBack} undoes it.
   */
  public static void planGenerically(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("SET plan_cache_mode = force_generic_plan");
    }
  }

  /**
   * Leaves a connection as the pool handed it out, before it goes back: no transaction, auto-commit
   * on, and no plan setting of {@link #planGenerically}.
   */
  public static void handBack(Connection connection) throws SQLException {
    if (!connection.getAutoCommit()) {
      connection.rollback();
      connection.setAutoCommit(true);
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute("RESET plan_cache_mode");
    }
  }

  /** Inserts {@code rows} completed keys of scope "s", named {@code filled-1} and on. */
  public static void fillWithCompletedKeys(Connection connection, String schema, int rows)
      throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "INSERT INTO "
              + schema
              + ".inbox (scope, key, state, attempts, created_at, updated_at, completed_at)"
              + " SELECT 's', 'filled-' || g, 'COMPLETED', 1, now(), now(), now()"
              + " FROM generate_series(1, "
              + rows
              + ") g");
    }
  }

  /** The claim as a holder with a stale fencing token would present it: it matches no row. */
  public static Claim withAnotherFencingToken(Claim claim) {
    return new Claim(
        claim.scope(),
        claim.key(),
        ClaimOutcome.NEW,
        claim.attempts(),
        claim.fencingToken() + 1,
        null,
        null,
        null);
  }
}
