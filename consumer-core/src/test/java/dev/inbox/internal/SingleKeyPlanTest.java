package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The statements that begin a transaction of the engine's own for one key, {@code execute}'s
 * reservation ({@link Statements#reserve}) and the claim written COMPLETED ({@link
 * Statements#insertUnlessSeen}, for a batch of one and for a key whose reservation was lost), keep
 * using the primary key with a generic plan cached while the table was empty, after it has grown to
 * 200k rows. Run here on a connection the test holds, so that the plan and the transaction's scan
 * counters are the test's to see.
 */
class SingleKeyPlanTest extends EngineTestSupport {

  private Claimer.Request request(String key) {
    return new Claimer.Request(key, null);
  }

  @Test
  void a_generic_plan_cached_on_an_empty_table_still_uses_the_primary_key_at_200k_rows()
      throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      // Generic plans from the first server-side prepare, so the plan is made on an empty table.
      execute(connection, "SET plan_cache_mode = force_generic_plan");
      try {
        connection.setAutoCommit(false);
        // pgjdbc prepares a statement on the server from its fifth execution on a connection.
        for (int i = 0; i < 10; i++) {
          assertThat(claimAtStart(connection, "warm-" + i).isNew()).isTrue();
          connection.commit();
          assertThat(claimAtStart(connection, "warm-" + i).outcome())
              .isEqualTo(ClaimOutcome.DUPLICATE);
          connection.rollback();
          Claimer.Reserved reserved =
              claimer.reserveAsFirstStatement(connection, SCOPE, request("warm-reserved-" + i));
          assertThat(reserved.claim().isNew()).isTrue();
          connection.rollback();
          assertThat(
                  claimer
                      .reserveAsFirstStatement(connection, SCOPE, request("warm-" + i))
                      .claim()
                      .outcome())
              .isEqualTo(ClaimOutcome.DUPLICATE);
          connection.rollback();
        }
        execute(
            connection,
            "INSERT INTO "
                + schema
                + ".inbox (scope, key, state, attempts, created_at, updated_at, completed_at)"
                + " SELECT 's', 'filled-' || g, 'COMPLETED', 1, now(), now(), now()"
                + " FROM generate_series(1, 200000) g");
        connection.commit();

        assertThat(claimAtStart(connection, "new-key").isNew()).isTrue();
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();

        assertThat(claimAtStart(connection, "filled-123456").outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();

        // The reservation's read, for a new key and for a settled one.
        assertThat(
                claimer
                    .reserveAsFirstStatement(connection, SCOPE, request("reserved-key"))
                    .claim()
                    .isNew())
            .isTrue();
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();
        assertThat(
                claimer
                    .reserveAsFirstStatement(connection, SCOPE, request("filled-4242"))
                    .claim()
                    .outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();
      } finally {
        // The connection goes back to the pool: leave no transaction and no plan setting behind.
        if (!connection.getAutoCommit()) {
          connection.rollback();
          connection.setAutoCommit(true);
        }
        execute(connection, "RESET plan_cache_mode");
      }
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
