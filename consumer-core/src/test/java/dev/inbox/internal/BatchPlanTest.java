package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.InboxTable;
import dev.inbox.RecordState;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The batch claim at a transaction's start ({@link Statements#insertUnlessSeenMany}) keeps its plan
 * between executions, so it must keep using the primary key with a generic plan cached while the
 * table was empty, after the table has grown to 200k rows; and the setting it plans under must not
 * outlive it into the handler's statements. Run on a connection the test holds, so that the plan
 * and the transaction's scan counters are the test's to see.
 */
class BatchPlanTest extends EngineTestSupport {

  @Test
  void a_batch_plan_cached_on_an_empty_table_still_uses_the_primary_key_at_200k_rows()
      throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      // Generic plans from the first server-side prepare, so the plan is made on an empty table.
      InboxTable.planGenerically(connection);
      // Vacuumed while empty, the table is believed empty: a plan made now scans it if it can.
      execute(connection, "VACUUM ANALYZE " + schema + ".inbox");
      try {
        connection.setAutoCommit(false);
        // pgjdbc prepares a statement on the server from its fifth execution on a connection.
        for (int i = 0; i < 10; i++) {
          List<String> keys = List.of("warm-a-" + i, "warm-b-" + i, "warm-c-" + i);
          assertThat(claimBatch(connection, keys).values()).allMatch(Claim::isNew);
          connection.commit();
          assertThat(claimBatch(connection, keys).values())
              .extracting(Claim::outcome)
              .containsOnly(ClaimOutcome.DUPLICATE);
          connection.rollback();
        }
        InboxTable.fillWithCompletedKeys(connection, schema, 200_000);
        connection.commit();

        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          keys.add(i % 5 == 0 ? "filled-" + (1000 * i + 7) : "fresh-" + i);
        }
        Map<String, Claim> claims = claimBatch(connection, keys);
        assertThat(claims.values().stream().filter(Claim::isNew).count()).isEqualTo(80);
        assertThat(claims.values().stream().filter(c -> !c.isNew()).map(Claim::outcome))
            .hasSize(20)
            .containsOnly(ClaimOutcome.DUPLICATE);
        assertThat(InboxTable.counters(connection, schema).sequentialScans())
            .as("sequential scans of a 200k-row inbox by the batch claim")
            .isZero();
        connection.rollback();
      } finally {
        InboxTable.handBack(connection);
      }
    }
  }

  @Test
  void the_handler_plans_under_the_enable_seqscan_the_transaction_had_before_the_claim()
      throws Exception {
    for (String before : List.of("on", "off")) {
      try (Connection connection = dataSource.getConnection()) {
        execute(connection, "SET enable_seqscan = " + before);
        try {
          connection.setAutoCommit(false);
          assertThat(claimBatch(connection, List.of("x-" + before, "y-" + before)).values())
              .allMatch(Claim::isNew);
          assertThat(enableSeqscan(connection))
              .as("in the transaction, after the claim")
              .isEqualTo(before);
          connection.rollback();
        } finally {
          connection.setAutoCommit(true);
          execute(connection, "RESET enable_seqscan");
        }
      }
    }
  }

  private Map<String, Claim> claimBatch(Connection connection, List<String> keys)
      throws SQLException {
    List<Claimer.Request> requests = new ArrayList<>();
    keys.forEach(key -> requests.add(new Claimer.Request(key, null)));
    return claimer.claimAsFirstStatement(connection, SCOPE, requests, null, RecordState.COMPLETED);
  }

  private static String enableSeqscan(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery("SELECT current_setting('enable_seqscan')")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
