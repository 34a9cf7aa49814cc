package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spi.InboxListener;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Review of the engine consolidation (e237093..engine): scenarios that lose or double an effect,
 * report a wrong outcome, or count a wrong metric.
 */
class EngineReviewTest extends InboxTestSupport {
  private static final String SCOPE = "review";

  /**
   * A handler that commits the inbox's transaction (which TransactionalHandler forbids) and then
   * throws. The reservation writes the key's row only at the end, so a commit of the handler's
   * would commit the effect without the key, and the retry would run it again: the handler's
   * connection refuses commit(), so its effect rolls back with the failure.
   */
  @Test
  void handler_that_commits_then_throws_does_not_double_its_effect_on_retry() throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                inbox.execute(
                    SCOPE,
                    "k-commit",
                    tx -> {
                      effect(tx, SCOPE, "k-commit", 1);
                      tx.commit();
                      throw new IllegalStateException("failed after a commit");
                    }))
        .isInstanceOf(RuntimeException.class);
    executeWithEffect(inbox, SCOPE, "k-commit");
    assertThat(effects("k-commit")).as("one key, one effect").isEqualTo(1);
  }

  /**
   * The reservation lost to a batch that recorded the key while the handler ran: execute runs again
   * and answers DUPLICATE; one effect, and one claim reported (the lost reservation is not one).
   */
  @Test
  void lost_reservation_is_counted_as_one_claim() throws Exception {
    assumeTableStorage(A_CLAIM_WAITS_FOR_THE_RESERVATION);
    Map<ClaimOutcome, AtomicInteger> claims = new ConcurrentHashMap<>();
    AtomicInteger handledOk = new AtomicInteger();
    InboxListener listener =
        new InboxListener() {
          @Override
          public void claimed(String scope, ClaimOutcome outcome, int count) {
            claims.computeIfAbsent(outcome, o -> new AtomicInteger()).addAndGet(count);
          }

          @Override
          public void handled(String scope, boolean succeeded, Duration latency) {
            if (succeeded) {
              handledOk.incrementAndGet();
            }
          }
        };
    Inbox inbox = inbox(s -> s.listener(listener));
    Inbox consumer = inbox();
    Execution execution =
        inbox.execute(
            SCOPE,
            "k-lost",
            tx -> {
              effect(tx, SCOPE, "k-lost", 1);
              // A consumer records the same key meanwhile (it takes no reservation lock).
              assertThat(deliverWithEffect(consumer, SCOPE, "k-lost", null))
                  .isEqualTo(ItemStatus.COMPLETED);
              return null;
            });
    assertThat(execution.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("k-lost")).as("the consumer's effect only").isEqualTo(1);
    int total = claims.values().stream().mapToInt(AtomicInteger::get).sum();
    assertThat(total).as("claims reported for one execute(): " + claims).isEqualTo(1);
    // The handler did run and return before its run was discarded: handled() reports handler
    // calls and their latency, not commits.
    assertThat(handledOk.get()).as("successful handler calls reported").isEqualTo(1);
  }

  /**
   * Joined execute() whose handler fails must count the attempt outside the caller's transaction.
   * Counted on a second connection of the same pool while the caller still held its own, with every
   * connection held by callers (here a pool of one) the count waited for the pool's
   * connectionTimeout and was then dropped: the key kept no FAILED record, so maxAttempts never
   * bit. A caller that runs work after its transaction ends (as Spring's does) gets the attempt
   * counted there, on its own connection.
   */
  @Test
  void joined_failure_is_counted_when_the_pool_is_exhausted_by_callers() throws Exception {
    try (HikariDataSource onlyOne = TestDataSources.pool(1)) {
      onlyOne.getHikariConfigMXBean().setConnectionTimeout(500);
      inbox().migrate();
      AfterTransaction caller = new AfterTransaction();
      Inbox joining =
          Inbox.builder()
              .dataSource(onlyOne)
              .settings(settings().maxAttempts(2).build())
              .callerTransactions(caller)
              .build();
      inboxes.add(joining);
      for (int attempt = 1; attempt <= 2; attempt++) {
        try (Connection connection = onlyOne.getConnection()) {
          connection.setAutoCommit(false);
          caller.begin(connection);
          assertThatThrownBy(
                  () ->
                      joining.execute(
                          SCOPE,
                          "k-pool",
                          tx -> {
                            effect(tx, SCOPE, "k-pool", 1);
                            throw new IllegalStateException("card declined");
                          }))
              .isInstanceOf(HandlerFailedException.class);
          caller.rollback();
          connection.setAutoCommit(true);
        }
        InboxRecord record = inbox().admin().find(SCOPE, "k-pool").orElse(null);
        assertThat(record).as("failed attempt %d was counted", attempt).isNotNull();
        assertThat(record.attempts()).isEqualTo(attempt);
      }
      try (Connection connection = onlyOne.getConnection()) {
        connection.setAutoCommit(false);
        caller.begin(connection);
        assertThat(joining.execute(SCOPE, "k-pool", tx -> null).outcome())
            .as("after maxAttempts counted failures")
            .isEqualTo(ClaimOutcome.GAVE_UP);
        caller.rollback();
        connection.setAutoCommit(true);
      }
      assertThat(effects("k-pool")).isZero();
    }
  }

  /**
   * A caller's transaction as a framework would hold it: bound to the thread, and running the work
   * registered with it once it has rolled back, on its connection.
   */
  private static final class AfterTransaction implements CallerTransactions {
    private Connection connection;
    private final List<Consumer<Connection>> afterwards = new ArrayList<>();

    void begin(Connection connection) {
      this.connection = connection;
    }

    void rollback() throws SQLException {
      connection.rollback();
      Connection ended = connection;
      connection = null;
      afterwards.forEach(work -> work.accept(ended));
      afterwards.clear();
    }

    @Override
    public Connection current() {
      return connection;
    }

    @Override
    public boolean runAfterRollback(Consumer<Connection> work) {
      afterwards.add(work);
      return true;
    }
  }

  /**
   * A joined handler that tries to commit the caller's connection itself (forbidden): the commit is
   * refused, so nothing commits behind the caller's back, the handler's attempt fails and is
   * counted, and the key runs again later.
   */
  @Test
  void joined_handler_that_commits_the_callers_connection_is_refused_and_commits_nothing()
      throws Exception {
    Inbox probe = inbox();
    try (Connection caller = dataSource.getConnection()) {
      caller.setAutoCommit(false);
      Inbox joining =
          Inbox.builder()
              .dataSource(dataSource)
              .settings(settings().build())
              .callerTransactions(() -> caller)
              .build();
      inboxes.add(joining);
      assertThatThrownBy(
              () ->
                  joining.execute(
                      SCOPE,
                      "k-callercommit",
                      tx -> {
                        effect(tx, SCOPE, "k-callercommit", 1);
                        tx.commit();
                        return null;
                      }))
          .isInstanceOf(HandlerFailedException.class)
          .hasRootCauseInstanceOf(IllegalStateException.class)
          .hasRootCauseMessage(
              "the handler's transaction belongs to the inbox, which commits it together with the"
                  + " key's record; commit() is not allowed (throw an exception to roll it back)");
      caller.rollback();
      caller.setAutoCommit(true);
    }
    assertThat(effects("k-callercommit")).as("nothing committed behind the caller").isZero();
    assertThat(
            probe
                .executeBatch(
                    SCOPE,
                    List.of(BatchItem.of("k-callercommit", 1L)),
                    BatchFailurePolicy.CONTINUE,
                    (item, tx) -> null)
                .items()
                .get(0)
                .status())
        .as("the failed attempt was counted, and the key runs again")
        .isEqualTo(ItemStatus.COMPLETED);
  }

  /**
   * Joined execute() whose handler fails rolls back to its savepoint but never releases it, and so
   * does a joined executeBatch() whose optimistic pass fails: the caller's transaction goes on one
   * subtransaction deeper each time (past 64 per transaction every snapshot in the cluster pays for
   * subtransaction overflow). On a fresh pgjdbc connection the inbox's first savepoint is
   * JDBC_SAVEPOINT_0; releasing it afterwards must fail with 3B001 if the inbox released it.
   */
  @Test
  void joined_failures_leave_no_savepoint_behind() throws Exception {
    inbox().migrate();
    List<String> leftBehind = new ArrayList<>();
    for (boolean batch : new boolean[] {false, true}) {
      try (Connection caller = TestDatabase.shared().connect()) {
        caller.setAutoCommit(false);
        Inbox joining =
            Inbox.builder()
                .dataSource(dataSource)
                .settings(settings().build())
                .callerTransactions(() -> caller)
                .build();
        inboxes.add(joining);
        if (batch) {
          joining.executeBatch(
              SCOPE,
              List.of(BatchItem.of("k-sp-b1", 1L), BatchItem.of("k-sp-b2", 2L)),
              BatchFailurePolicy.CONTINUE,
              (item, tx) -> {
                if (item.key().equals("k-sp-b2")) {
                  throw new IllegalStateException("declined");
                }
                return null;
              });
        } else {
          assertThatThrownBy(
                  () ->
                      joining.execute(
                          SCOPE,
                          "k-sp",
                          tx -> {
                            throw new IllegalStateException("declined");
                          }))
              .isInstanceOf(HandlerFailedException.class);
        }
        try (Statement statement = caller.createStatement()) {
          statement.execute("RELEASE SAVEPOINT JDBC_SAVEPOINT_0");
          leftBehind.add(batch ? "executeBatch" : "execute");
        } catch (SQLException e) {
          assertThat(e.getSQLState()).isEqualTo("3B001");
        }
        caller.rollback();
      }
    }
    assertThat(leftBehind).as("joined calls that left their savepoint behind").isEmpty();
  }

  /**
   * A caller's REPEATABLE READ transaction whose snapshot predates another transaction's commit of
   * the key: the joined claim cannot see the row it conflicts with, and must not answer NEW (that
   * would run the effect twice). It answers DUPLICATE or fails with a retryable error.
   */
  @Test
  void joined_repeatable_read_claim_of_a_key_committed_after_its_snapshot_never_runs_again()
      throws Exception {
    assumeTableStorage(
        "the key guard refuses any insert from a REPEATABLE READ transaction (SQLState 25000, not"
            + " transient): only READ COMMITTED callers may join");
    Inbox plain = inbox();
    try (Connection caller = dataSource.getConnection()) {
      caller.setAutoCommit(false);
      caller.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      queryLong(caller, "SELECT count(*) FROM " + schema + ".effects"); // takes the snapshot
      executeWithEffect(plain, SCOPE, "k-rr");
      Inbox joining =
          Inbox.builder()
              .dataSource(dataSource)
              .settings(settings().build())
              .callerTransactions(() -> caller)
              .build();
      inboxes.add(joining);
      try {
        Execution execution = executeWithEffect(joining, SCOPE, "k-rr");
        assertThat(execution.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
        caller.commit();
      } catch (InboxDatabaseException e) {
        assertThat(TransientFailures.isTransient(e)).as(e.toString()).isTrue();
        caller.rollback();
      } finally {
        caller.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        caller.setAutoCommit(true);
      }
    }
    assertThat(effects("k-rr")).isEqualTo(1);
  }
}
