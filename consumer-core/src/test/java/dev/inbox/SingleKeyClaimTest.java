package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A single key is claimed by one statement that inserts it or reads it as its snapshot sees it.
 * These tests pin what that shortcut must not change: a duplicate takes no lock, and the plan that
 * PostgreSQL caches for the statement keeps using the primary key after the table has grown.
 */
class SingleKeyClaimTest extends InboxTestSupport {

  @Test
  void a_generic_plan_cached_on_an_empty_table_still_uses_the_primary_key_at_200k_rows()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection connection = dataSource.getConnection()) {
      // Generic plans from the first server-side prepare, so the plan is made on an empty table.
      execute(connection, "SET plan_cache_mode = force_generic_plan");
      // pgjdbc prepares a statement on the server from its fifth execution on a connection.
      for (int i = 0; i < 10; i++) {
        connection.setAutoCommit(false);
        assertThat(inbox.claimAtStart(connection, "s", "warm-" + i, null).isNew()).isTrue();
        connection.commit();
      }
      execute(
          connection,
          "INSERT INTO "
              + schema
              + ".inbox (scope, key, state, attempts, created_at, updated_at, completed_at)"
              + " SELECT 's', 'filled-' || g, 'COMPLETED', 1, now(), now(), now()"
              + " FROM generate_series(1, 200000) g");
      connection.commit();

      Claim fresh = inbox.claimAtStart(connection, "s", "new-key", null);
      assertThat(fresh.isNew()).isTrue();
      assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
      connection.rollback();

      Claim duplicate = inbox.claimAtStart(connection, "s", "filled-123456", null);
      assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
      connection.rollback();
      connection.setAutoCommit(true);
      execute(connection, "RESET plan_cache_mode");
    }
  }

  @Test
  void a_duplicate_claim_neither_locks_nor_writes_its_row() throws Exception {
    Inbox inbox = inbox();
    inbox.execute("s", "k", tx -> null);
    String version = "SELECT xmin::text || '/' || xmax::text FROM " + schema + ".inbox";
    String before = queryString(version);
    assertThat(before).endsWith("/0");
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(inbox.claimAtStart(tx, "s", "k", null).outcome())
          .isEqualTo(ClaimOutcome.DUPLICATE);
      // Seen from another connection while the duplicate's transaction is still open: a lock
      // would have put its transaction id in xmax, a write would have made a new version.
      assertThat(queryString(version)).isEqualTo(before);
      tx.rollback();
    }
  }

  private String queryString(String query) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private long sequentialScansOfInboxInThisTransaction(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE schemaname = '"
                    + schema
                    + "' AND relname = 'inbox'")) {
      assertThat(rs.next()).as("the inbox table has statistics in this transaction").isTrue();
      return rs.getLong(1);
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
