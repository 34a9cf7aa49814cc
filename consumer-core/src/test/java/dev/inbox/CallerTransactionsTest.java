package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.spi.CallerTransactions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * The seam for the caller's transaction: with {@link CallerTransactions}, execute and executeBatch
 * claim and run their handlers on the transaction the calling thread holds, so that the handler's
 * writes, the key and the caller's own writes commit or roll back together, and the inbox never
 * commits, rolls back or closes that connection.
 */
class CallerTransactionsTest extends InboxTestSupport {
  private static final String SCOPE = "orders";

  /** The transaction the test's "application" holds on this thread, as Spring would bind it. */
  private final ThreadLocal<Connection> bound = new ThreadLocal<>();

  private Inbox joiningInbox() {
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(settings().build())
            .migrate(true)
            .callerTransactions(bound::get)
            .build();
    inboxes.add(inbox);
    return inbox;
  }

  /** Runs the work on a transaction bound to this thread; commits when asked, else rolls back. */
  private <T> T inCallersTransaction(boolean commit, SqlWork<T> work) throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      bound.set(connection);
      try {
        T result = work.run(connection);
        assertThat(connection.isClosed()).as("the inbox never closes the caller's").isFalse();
        assertThat(connection.getAutoCommit()).isFalse();
        if (commit) {
          connection.commit();
        } else {
          connection.rollback();
        }
        return result;
      } finally {
        bound.remove();
        connection.setAutoCommit(true);
      }
    }
  }

  @FunctionalInterface
  private interface SqlWork<T> {
    T run(Connection connection) throws Exception;
  }

  private void callersOwnWrite(Connection connection, String key) throws SQLException {
    effect(connection, "caller", key, 100);
  }

  @Test
  void execute_commits_the_key_with_the_callers_writes_and_a_rollback_leaves_both_undone()
      throws Exception {
    Inbox inbox = joiningInbox();
    Execution rolledBack =
        inCallersTransaction(
            false,
            tx -> {
              callersOwnWrite(tx, "o-1");
              return executeWithEffect(inbox, SCOPE, "o-1");
            });
    assertThat(rolledBack.executed()).isTrue();
    assertThat(inbox.admin().find(SCOPE, "o-1"))
        .as("the key rolled back with the caller")
        .isEmpty();
    assertThat(effects()).isZero();

    Execution committed =
        inCallersTransaction(
            true,
            tx -> {
              callersOwnWrite(tx, "o-1");
              return executeWithEffect(inbox, SCOPE, "o-1");
            });
    assertThat(committed.executed()).isTrue();
    assertThat(inbox.admin().find(SCOPE, "o-1").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
    assertThat(effects("o-1")).as("the handler's effect and the caller's write").isEqualTo(2);

    Execution again = inCallersTransaction(true, tx -> executeWithEffect(inbox, SCOPE, "o-1"));
    assertThat(again.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("o-1")).isEqualTo(2);
  }

  @Test
  void a_failing_handler_is_rolled_back_alone_and_counted_and_the_callers_transaction_goes_on()
      throws Exception {
    Inbox inbox = joiningInbox();
    inCallersTransaction(
        true,
        tx -> {
          callersOwnWrite(tx, "o-2");
          assertThatThrownBy(
                  () ->
                      inbox.execute(
                          SCOPE,
                          "o-2",
                          handlerTx -> {
                            effect(handlerTx, SCOPE, "o-2", 1);
                            throw new IllegalStateException("card declined");
                          }))
              .isInstanceOf(HandlerFailedException.class)
              .hasRootCauseMessage("card declined");
          // The caller's transaction is usable, and its own write still in it.
          callersOwnWrite(tx, "o-2b");
          return null;
        });
    assertThat(effects("o-2")).as("the caller's write only").isEqualTo(1);
    assertThat(effects("o-2b")).isEqualTo(1);
    InboxRecord failed = inbox.admin().find(SCOPE, "o-2").orElseThrow();
    assertThat(failed.state()).isEqualTo(RecordState.FAILED);
    assertThat(failed.attempts()).isEqualTo(1);

    Execution retried = inCallersTransaction(true, tx -> executeWithEffect(inbox, SCOPE, "o-2"));
    assertThat(retried.executed()).isTrue();
    assertThat(effects("o-2")).isEqualTo(2);
  }

  @Test
  void a_batch_joins_the_callers_transaction_and_a_failing_item_does_not_undo_the_others()
      throws Exception {
    Inbox inbox = joiningInbox();
    BatchResult<Long> result =
        inCallersTransaction(
            true,
            tx -> {
              callersOwnWrite(tx, "batch");
              return inbox.executeBatch(
                  SCOPE,
                  List.of(
                      BatchItem.of("b-1", 1L), BatchItem.of("b-2", 2L), BatchItem.of("b-3", 3L)),
                  BatchFailurePolicy.CONTINUE,
                  (item, handlerTx) -> {
                    // The caller's own connection, behind the inbox's guard.
                    assertThat(handlerTx.unwrap(PGConnection.class).getBackendPID())
                        .isEqualTo(tx.unwrap(PGConnection.class).getBackendPID());
                    effect(handlerTx, SCOPE, item.key(), item.payload());
                    if (item.key().equals("b-2")) {
                      throw new IllegalArgumentException("bad payment");
                    }
                    return null;
                  });
            });
    assertThat(result.counts())
        .containsEntry(ItemStatus.COMPLETED, 2)
        .containsEntry(ItemStatus.FAILED, 1);
    assertThat(effects("b-1")).isEqualTo(1);
    assertThat(effects("b-2")).isZero();
    assertThat(effects("b-3")).isEqualTo(1);
    assertThat(effects("batch")).isEqualTo(1);
    assertThat(inbox.admin().find(SCOPE, "b-2").orElseThrow().state())
        .isEqualTo(RecordState.FAILED);

    BatchResult<Long> rolledBack =
        inCallersTransaction(
            false,
            tx ->
                inbox.executeBatch(
                    SCOPE,
                    List.of(BatchItem.of("b-4", 4L)),
                    BatchFailurePolicy.STOP,
                    BatchHandler.setBased((items, handlerTx) -> effects(handlerTx, SCOPE, items))));
    assertThat(rolledBack.count(ItemStatus.COMPLETED)).isEqualTo(1);
    assertThat(inbox.admin().find(SCOPE, "b-4")).as("rolled back with the caller").isEmpty();
    assertThat(effects("b-4")).isZero();
  }

  @Test
  void the_callers_lock_timeout_is_restored_after_execute_and_after_a_batch() throws Exception {
    Inbox inbox = joiningInbox();
    inCallersTransaction(
        true,
        tx -> {
          try (Statement statement = tx.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '1234ms'");
          }
          executeWithEffect(inbox, SCOPE, "t-1");
          assertThat(lockTimeout(tx)).isEqualTo("1234ms");
          deliverWithEffect(inbox, SCOPE, "t-2", null);
          assertThat(lockTimeout(tx)).isEqualTo("1234ms");
          return null;
        });
    assertThat(effects()).isEqualTo(2);
  }

  @Test
  void thirty_two_threads_on_one_key_each_in_its_own_callers_transaction_take_effect_once()
      throws Exception {
    Inbox inbox = joiningInbox();
    int threads = 32;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    AtomicInteger handled = new AtomicInteger();
    List<Future<ClaimOutcome>> outcomes = new ArrayList<>();
    try {
      for (int i = 0; i < threads; i++) {
        outcomes.add(
            pool.submit(
                () -> {
                  start.await();
                  return inCallersTransaction(
                      true,
                      tx ->
                          inbox
                              .execute(
                                  SCOPE,
                                  "storm",
                                  handlerTx -> {
                                    handled.incrementAndGet();
                                    effect(handlerTx, SCOPE, "storm", 1);
                                    return null;
                                  })
                              .outcome());
                }));
      }
      start.countDown();
      int news = 0;
      for (Future<ClaimOutcome> outcome : outcomes) {
        ClaimOutcome answer = outcome.get(60, TimeUnit.SECONDS);
        assertThat(answer).isIn(ClaimOutcome.NEW, ClaimOutcome.DUPLICATE);
        news += answer == ClaimOutcome.NEW ? 1 : 0;
      }
      assertThat(news).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
    assertThat(effects("storm")).as("one effect for 32 callers").isEqualTo(1);
    assertThat(handled.get()).isEqualTo(1);
  }

  @Test
  void without_a_bound_transaction_the_inbox_begins_its_own() throws Exception {
    Inbox inbox = joiningInbox();
    assertThat(executeWithEffect(inbox, SCOPE, "own").executed()).isTrue();
    assertThat(inbox.admin().find(SCOPE, "own").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
    assertThat(effects("own")).isEqualTo(1);
  }

  @Test
  void a_bound_connection_in_auto_commit_mode_is_refused_with_a_message_that_says_so()
      throws Exception {
    Inbox inbox = joiningInbox();
    try (Connection connection = dataSource.getConnection()) {
      bound.set(connection);
      try {
        assertThatThrownBy(() -> executeWithEffect(inbox, SCOPE, "auto"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("autoCommit=false");
      } finally {
        bound.remove();
      }
    }
    assertThat(effects()).isZero();
  }

  private static String lockTimeout(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery("SHOW lock_timeout")) {
      rs.next();
      return rs.getString(1);
    }
  }
}
