package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A hostile review of claims on the caller's transaction written COMPLETED at once (a completion
 * without a result sends no statement; one with a result is guarded by the claim's fencing token
 * and by its row having been written in this transaction). Each test names the attack; the ones
 * that found a defect are disabled with it.
 */
class TodayReviewTest extends InboxTestSupport {

  private static final StoredResult RESULT =
      StoredResult.of(201, "created".getBytes(StandardCharsets.UTF_8));

  private static Connection begin(Connection connection) throws SQLException {
    connection.setAutoCommit(false);
    return connection;
  }

  /** What every later delivery sees of the key, on a transaction of its own. */
  private Claim claimAgain(Inbox inbox, String key) throws SQLException {
    try (Connection tx = begin(dataSource.getConnection())) {
      Claim claim = inbox.claim(tx, "orders", key, null);
      tx.rollback();
      return claim;
    }
  }

  /** Completes the claim without a result and commits, or rolls back when complete refuses. */
  private static void completeOrRollBack(Inbox inbox, Connection tx, Claim claim)
      throws SQLException {
    try {
      inbox.complete(tx, claim, null);
      tx.commit();
    } catch (RuntimeException refused) {
      tx.rollback();
    }
  }

  /** The key's effects once the next delivery applied it, if its claim answers NEW. */
  private long effectsOnceDeliveredAgain(Inbox inbox, String key) throws SQLException {
    return effects(key) + (claimAgain(inbox, key).isNew() ? 1 : 0);
  }

  /** The key answers DUPLICATE with {@link #RESULT}, its effect applied once. */
  private void assertAppliedOnceWithItsResult(Inbox inbox, String key) throws SQLException {
    Claim next = claimAgain(inbox, key);
    assertThat(next.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(statusOf(next)).isEqualTo(201);
    assertThat(effects(key)).isEqualTo(1);
  }

  private static int statusOf(Claim claim) {
    return claim.result().map(StoredResult::status).orElse(-1);
  }

  @Test
  void completing_a_rolled_back_claim_on_another_transaction_is_refused() throws Exception {
    Inbox inbox = inbox();
    Claim claim;
    try (Connection tx1 = begin(dataSource.getConnection())) {
      claim = inbox.claim(tx1, "orders", "k-rolled-back", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      tx1.rollback();
    }
    try (Connection tx2 = begin(dataSource.getConnection())) {
      effect(tx2, "orders", "k-rolled-back", 1);
      completeOrRollBack(inbox, tx2, claim);
    }
    assertThat(effectsOnceDeliveredAgain(inbox, "k-rolled-back")).isEqualTo(1);
  }

  @Test
  void completing_a_claim_rolled_back_to_a_savepoint_before_it_is_refused() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = begin(dataSource.getConnection())) {
      Savepoint beforeClaim = tx.setSavepoint();
      Claim claim = inbox.claim(tx, "orders", "k-sp-before", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      tx.rollback(beforeClaim);
      effect(tx, "orders", "k-sp-before", 1);
      completeOrRollBack(inbox, tx, claim);
    }
    assertThat(effectsOnceDeliveredAgain(inbox, "k-sp-before")).isEqualTo(1);
  }

  @Test
  void a_rollback_to_a_savepoint_taken_after_the_claim_keeps_the_claim_and_its_result()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = begin(dataSource.getConnection())) {
      Claim claim = inbox.claim(tx, "orders", "k-sp-after", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      Savepoint afterClaim = tx.setSavepoint();
      effect(tx, "orders", "k-sp-after", 99);
      tx.rollback(afterClaim);
      effect(tx, "orders", "k-sp-after", 1);
      inbox.complete(tx, claim, RESULT);
      tx.commit();
    }
    assertAppliedOnceWithItsResult(inbox, "k-sp-after");
    assertThat(queryLong("SELECT sum(amount) FROM " + schema + ".effects")).isEqualTo(1);
  }

  @Test
  void a_stale_claim_cannot_store_its_result_on_the_record_another_transaction_committed()
      throws Exception {
    Inbox inbox = inbox();
    Claim claim;
    try (Connection tx1 = begin(dataSource.getConnection())) {
      claim = inbox.claim(tx1, "orders", "k-stale", null);
      effect(tx1, "orders", "k-stale", 1);
      tx1.commit(); // no complete()
    }
    try (Connection tx2 = begin(dataSource.getConnection())) {
      // Refused, though as "this indicates a bug": the caller's misuse, not the inbox's.
      assertThatThrownBy(() -> inbox.complete(tx2, claim, RESULT))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("STORE_RESULT");
      tx2.rollback();
    }
    Claim next = claimAgain(inbox, "k-stale");
    assertThat(next.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(next.result()).as("no result replaced by the stale claim").isEmpty();
    assertThat(effects("k-stale")).isEqualTo(1);
  }

  @Test
  void a_failed_key_retried_on_the_callers_transaction_stores_its_result() throws Exception {
    Inbox inbox = inbox();
    executeFailing(inbox, "orders", "k-retry", null);
    try (Connection tx = begin(dataSource.getConnection())) {
      Claim claim = inbox.claim(tx, "orders", "k-retry", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(claim.attempts()).isEqualTo(2);
      effect(tx, "orders", "k-retry", 1);
      inbox.complete(tx, claim, RESULT);
      tx.commit();
    }
    assertAppliedOnceWithItsResult(inbox, "k-retry");
  }

  @Test
  void an_expired_lease_taken_over_on_the_callers_transaction_fences_its_old_owner()
      throws Exception {
    Inbox inbox = inbox();
    Claim leased = inbox.leases().claim("orders", "k-takeover", null);
    assertThat(leased.outcome()).isEqualTo(ClaimOutcome.NEW);
    timePasses(Duration.ofMinutes(5));
    try (Connection tx = begin(dataSource.getConnection())) {
      Claim claim = inbox.claim(tx, "orders", "k-takeover", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(claim.fencingToken()).isGreaterThan(leased.fencingToken());
      effect(tx, "orders", "k-takeover", 1);
      inbox.complete(tx, claim, RESULT);
      tx.commit();
    }
    assertThatThrownBy(
            () ->
                inbox
                    .leases()
                    .complete(leased.lease().orElseThrow(), StoredResult.of(500, new byte[0])))
        .isInstanceOf(LeaseLostException.class);
    assertAppliedOnceWithItsResult(inbox, "k-takeover");
  }

  @Test
  void a_released_key_claimed_on_the_callers_transaction_answers_its_new_result_or_none()
      throws Exception {
    Inbox inbox = inbox();
    for (String key : List.of("k-released-result", "k-released-none")) {
      executeFailing(inbox, "orders", key, null);
      assertThat(inbox.admin().release("orders", key)).isEqualTo(ReleaseResult.RELEASED);
      try (Connection tx = begin(dataSource.getConnection())) {
        Claim claim = inbox.claim(tx, "orders", key, null);
        assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
        effect(tx, "orders", key, 1);
        inbox.complete(tx, claim, key.endsWith("result") ? RESULT : null);
        tx.commit();
      }
    }
    assertThat(statusOf(claimAgain(inbox, "k-released-result"))).isEqualTo(201);
    Claim none = claimAgain(inbox, "k-released-none");
    assertThat(none.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(none.result()).isEmpty();
    assertThat(effects()).isEqualTo(2);
  }

  /**
   * The HTTP filter's and the starter's path: {@code execute} joined to the caller's transaction
   * stores the handler's result with the guarded STORE_RESULT, for a new key, a failed one retried
   * and a released one; the caller commits, and every duplicate answers the stored result.
   */
  @Test
  void execute_on_the_callers_transaction_stores_its_result_whatever_the_key_was()
      throws Exception {
    Inbox inbox = inbox();
    executeFailing(inbox, "orders", "k-exec-retry", null);
    executeFailing(inbox, "orders", "k-exec-released", null);
    assertThat(inbox.admin().release("orders", "k-exec-released"))
        .isEqualTo(ReleaseResult.RELEASED);
    List<String> keys = List.of("k-exec-new", "k-exec-retry", "k-exec-released");
    try (Connection tx = begin(dataSource.getConnection())) {
      Inbox joining = joining(tx);
      for (String key : keys) {
        Execution execution =
            joining.execute(
                "orders",
                key,
                handlerTx -> {
                  effect(handlerTx, "orders", key, 1);
                  return RESULT;
                });
        assertThat(execution.outcome()).as(key).isEqualTo(ClaimOutcome.NEW);
      }
      tx.commit();
    }
    for (String key : keys) {
      Execution again = executeWithEffect(inbox, "orders", key);
      assertThat(again.outcome()).as(key).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(again.storedResult().map(StoredResult::status)).as(key).contains(201);
      assertThat(effects(key)).as(key).isEqualTo(1);
    }
  }

  @Test
  void thirty_two_joined_claims_racing_one_key_apply_its_effect_once() throws Exception {
    Inbox inbox = inbox();
    int threads = 32;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<ClaimOutcome>> outcomes = new ArrayList<>();
    try {
      for (int i = 0; i < threads; i++) {
        outcomes.add(
            pool.submit(
                () -> {
                  start.await();
                  try (Connection tx = begin(dataSource.getConnection())) {
                    Claim claim = inbox.claim(tx, "orders", "k-race", null);
                    if (claim.isNew()) {
                      effect(tx, "orders", "k-race", 1);
                      inbox.complete(tx, claim, RESULT);
                    }
                    tx.commit();
                    return claim.outcome();
                  }
                }));
      }
      start.countDown();
      List<ClaimOutcome> seen = new ArrayList<>();
      for (Future<ClaimOutcome> outcome : outcomes) {
        seen.add(outcome.get());
      }
      assertThat(seen).filteredOn(o -> o == ClaimOutcome.NEW).hasSize(1);
    } finally {
      pool.shutdownNow();
    }
    assertThat(effects("k-race")).isEqualTo(1);
    assertThat(statusOf(claimAgain(inbox, "k-race"))).isEqualTo(201);
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE state <> 'COMPLETED'"))
        .as("rows left IN_PROGRESS by joined claims")
        .isZero();
  }

  @Test
  void an_aborted_transaction_behind_a_plain_proxy_is_refused_by_complete() throws Exception {
    Inbox inbox = inbox();
    try (Connection real = begin(dataSource.getConnection())) {
      Connection proxy = notUnwrapping(real);
      Claim claim = inbox.claim(proxy, "orders", "k-proxy", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      try (Statement st = proxy.createStatement()) {
        assertThatThrownBy(() -> st.execute("SELECT 1/0")).isInstanceOf(SQLException.class);
      }
      assertThatThrownBy(() -> inbox.complete(proxy, claim, null))
          .isInstanceOf(InboxDatabaseException.class);
      real.rollback();
    }
    assertThat(claimAgain(inbox, "k-proxy").outcome()).isEqualTo(ClaimOutcome.NEW);
  }

  /** The connection behind a proxy that, like some pools' wrappers, does not unwrap to pgjdbc. */
  private static Connection notUnwrapping(Connection real) {
    return (Connection)
        Proxy.newProxyInstance(
            TodayReviewTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (self, method, args) -> {
              if (method.getName().equals("isWrapperFor")) {
                return false;
              }
              if (method.getName().equals("unwrap")) {
                throw new SQLException("not a wrapper");
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
