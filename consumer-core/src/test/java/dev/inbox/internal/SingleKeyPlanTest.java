package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.InboxTable;
import java.sql.Connection;
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
      InboxTable.planGenerically(connection);
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
        InboxTable.fillWithCompletedKeys(connection, schema, 200_000);
        connection.commit();

        assertThat(claimAtStart(connection, "new-key").isNew()).isTrue();
        assertThat(InboxTable.counters(connection, schema).sequentialScans()).isZero();
        connection.rollback();

        assertThat(claimAtStart(connection, "filled-123456").outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(InboxTable.counters(connection, schema).sequentialScans()).isZero();
        connection.rollback();

        // The reservation's read, for a new key and for a settled one.
        assertThat(
                claimer
                    .reserveAsFirstStatement(connection, SCOPE, request("reserved-key"))
                    .claim()
                    .isNew())
            .isTrue();
        assertThat(InboxTable.counters(connection, schema).sequentialScans()).isZero();
        connection.rollback();
        assertThat(
                claimer
                    .reserveAsFirstStatement(connection, SCOPE, request("filled-4242"))
                    .claim()
                    .outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(InboxTable.counters(connection, schema).sequentialScans()).isZero();
        connection.rollback();
      } finally {
        InboxTable.handBack(connection);
      }
    }
  }
}
