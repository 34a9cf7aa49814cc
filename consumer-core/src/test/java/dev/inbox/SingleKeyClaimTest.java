package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A single key is claimed by one statement that inserts it or reads it as its snapshot sees it.
 * These tests pin what that shortcut must not change: a duplicate takes no lock, and the plan that
 * PostgreSQL caches for the statement keeps using the primary key after the table has grown. (The
 * forms that begin the engine's own transactions, execute's reservation and the claim written
 * COMPLETED, are pinned in {@code internal.SingleKeyPlanTest}.)
 */
class SingleKeyClaimTest extends InboxTestSupport {

  @Test
  void a_generic_plan_cached_on_an_empty_table_still_uses_the_primary_key_at_200k_rows()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection connection = dataSource.getConnection()) {
      // Generic plans from the first server-side prepare, so the plan is made on an empty table.
      InboxTable.planGenerically(connection);
      try {
        // pgjdbc prepares a statement on the server from its fifth execution on a connection.
        for (int i = 0; i < 10; i++) {
          connection.setAutoCommit(false);
          Claim warm = inbox.claim(connection, "s", "warm-" + i, null);
          assertThat(warm.isNew()).isTrue();
          inbox.complete(connection, warm, null);
          connection.commit();
          assertThat(inbox.claim(connection, "s", "warm-caller-" + i, null).isNew()).isTrue();
          assertThat(inbox.claim(connection, "s", "warm-" + i, null).isNew()).isFalse();
          connection.commit();
        }
        InboxTable.fillWithCompletedKeys(connection, schema, 200_000);
        connection.commit();

        assertThat(inbox.claim(connection, "s", "filled-65432", null).outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(inbox.claim(connection, "s", "another-new-key", null).isNew()).isTrue();
        assertThat(InboxTable.counters(connection, schema).sequentialScans()).isZero();
      } finally {
        InboxTable.handBack(connection);
      }
    }
  }

  @Test
  void a_duplicate_claim_neither_locks_nor_writes_its_row() throws Exception {
    Inbox inbox = inbox();
    inbox.execute("s", "k", tx -> null);
    String version = "SELECT xmin::text || '/' || xmax::text FROM " + schema + ".inbox";
    String before = queryString(version);
    assertThat(before).endsWith("/0");
    // A lock would have put its transaction's id in xmax, and it stays there after that
    // transaction ended; a write would have made a new version.
    assertThat(inbox.execute("s", "k", tx -> null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(queryString(version)).as("nor does execute's reservation of it").isEqualTo(before);
    assertThat(deliverWithEffect(inbox, "s", "k", null)).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(queryString(version)).as("nor does a batch's claim of it").isEqualTo(before);
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(inbox.claim(tx, "s", "k", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      // Seen from another connection while the duplicate's transaction is still open.
      assertThat(queryString(version)).isEqualTo(before);
      tx.rollback();
    }
    assertThat(effects()).isZero();
  }

  @Test
  @Timeout(30)
  void an_execute_that_waited_for_a_first_one_who_committed_answers_duplicate() throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofSeconds(120)));
    Future<Execution> waiting;
    try (HeldKey first = HeldKey.reserved(inbox, "s", "race", null, withEffect("race", 100))) {
      waiting = executeAside(inbox, "race", withEffect("race", 7));
      awaitBlockedBy(first.pid(), waiting);
    }
    assertThat(waiting.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("race")).isEqualTo(1);
  }

  /**
   * A batch claims a new key with a plain INSERT as its transaction's first statement: one that
   * waited for a first claimant who committed fails with a unique violation, and the batch begins
   * again and takes the full path, which classifies the key.
   */
  @Test
  @Timeout(30)
  void a_batch_that_waited_for_a_first_one_who_committed_answers_duplicate() throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofSeconds(120)));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<ItemStatus> waiting;
    try (HeldKey first = HeldKey.claimed(inbox, "s", "race", withEffect("race", 100))) {
      waiting = pool.submit(() -> deliverWithEffect(inbox, "s", "race", null));
      awaitBlockedBy(first.pid(), waiting);
    } finally {
      pool.shutdown();
    }
    assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects("race")).isEqualTo(1);
  }

  @Test
  @Timeout(30)
  void an_execute_that_waited_for_a_first_one_who_rolled_back_claims_the_key() throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofSeconds(120)));
    Future<Execution> waiting;
    try (HeldKey first =
        HeldKey.reserved(
            inbox,
            "s",
            "race",
            null,
            tx -> {
              effect(tx, "s", "race", 100);
              throw serializationFailure();
            })) {
      waiting = executeAside(inbox, "race", withEffect("race", 7));
      awaitBlockedBy(first.pid(), waiting);
      assertThatThrownBy(first::execution).hasRootCauseInstanceOf(SQLException.class);
    }

    Execution second = waiting.get(10, TimeUnit.SECONDS);
    assertThat(second.executed()).isTrue();
    assertThat(queryLong("SELECT sum(amount) FROM " + schema + ".effects")).isEqualTo(7);
    InboxRecord row = inbox.admin().find("s", "race").orElseThrow();
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.attempts()).isEqualTo(1);
  }

  private TransactionalHandler withEffect(String key, long amount) {
    return tx -> {
      effect(tx, "s", key, amount);
      return null;
    };
  }

  /** {@code execute} on another thread. */
  private static Future<Execution> executeAside(
      Inbox inbox, String key, TransactionalHandler handler) {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      return pool.submit(() -> inbox.execute("s", key, handler));
    } finally {
      pool.shutdown();
    }
  }
}
