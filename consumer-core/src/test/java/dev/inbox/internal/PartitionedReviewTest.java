package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.AdminAction;
import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.ItemStatus;
import dev.inbox.SettleResult;
import dev.inbox.StoredResult;
import dev.inbox.internal.Generations.PartitionState;
import dev.inbox.testing.Await;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A hostile review of the partitioned storage (issue 22): interleavings around a rotation's switch
 * and a retention's carry-over, and callers whose pool is not READ COMMITTED. Each test asserts
 * what the plain table answers for the same interleaving.
 */
class PartitionedReviewTest extends PartitionedTestSupport {
  private static final Duration RETENTION = Duration.ofHours(24);

  /**
   * The rotation's window: a transaction that first locks the table after the rotation listed the
   * transactions its second wait waits for (so the rotation does not wait for it) and before the
   * switch claims k into generation 0 and is still open after the switch. A claim of k afterwards
   * routes to generation 1, waits for k's lock, and must answer DUPLICATE once the first commits,
   * as the plain table does. The rotation is held in each of its two waits by a transaction open
   * since before it listed them: {@code old} since before the attach, {@code middle} since between
   * the first wait's list and the refresh of the partition lists.
   */
  private Claim claimAcrossTheSwitch(Inbox inbox, Callable<Claim> secondClaim) throws Exception {
    Generations generations = generations(inbox);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (Connection old = begin();
        Connection middle = begin();
        Connection first = begin()) {
      assertThat(inbox.claim(old, SCOPE, "before", null).isNew()).isTrue();
      String unrefreshed = generationColumnVersion();
      Future<Boolean> rotated = threads.submit(() -> generations.rotate(true));
      awaitRotationWaiting(rotated, "the first wait, for old", unrefreshed, false);
      assertThat(generations.state(old, 1)).isEqualTo(PartitionState.ATTACHED);
      assertThat(inbox.claim(middle, SCOPE, "between", null).isNew()).isTrue();
      old.commit();
      awaitRotationWaiting(rotated, "the second wait, for middle", unrefreshed, true);
      Claim firstClaim = inbox.claim(first, SCOPE, "k", null);
      assertThat(firstClaim.isNew()).isTrue();
      effect(first, "k");
      middle.commit();
      assertThat(rotated.get()).as("the switch does not wait for the later transaction").isTrue();
      assertThat(writeGeneration()).isEqualTo(1);
      int firstPid = pid(first);
      Future<Claim> second = threads.submit(secondClaim);
      Await.until(
          "the second claim waits for the first",
          Duration.ofMinutes(2),
          () ->
              queryLong(
                      "SELECT count(*) FROM pg_stat_activity WHERE "
                          + firstPid
                          + " = ANY(pg_blocking_pids(pid))")
                  > 0);
      inbox.complete(first, firstClaim, null);
      first.commit();
      return second.get();
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void a_claim_in_the_callers_transaction_just_after_a_switch_answers_duplicate() throws Exception {
    Inbox inbox = inbox();
    Claim second =
        claimAcrossTheSwitch(
            inbox,
            () -> {
              try (Connection c = begin()) {
                Claim claim = inbox.claim(c, SCOPE, "k", null);
                c.rollback();
                return claim;
              }
            });
    assertThat(second.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("k")).isEqualTo(1);
    assertThat(keysStoredTwice()).isZero();
  }

  /**
   * The same window for a batch on the caller's transaction (a transactional batch listener): its
   * claim is not the transaction's first statement, so the guard's 40001 cannot be taken back by
   * beginning the transaction again; the pass's savepoint is rolled back and the keys claimed once
   * more instead, and the caller's transaction commits the batch.
   */
  @Test
  void a_batch_on_the_callers_transaction_just_after_a_switch_answers_duplicate() throws Exception {
    ThreadLocal<Connection> callers = new ThreadLocal<>();
    Inbox joining =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(settings().build())
            .callerTransactions(callers::get)
            .migrate(true)
            .build();
    inboxes.add(joining);
    ItemStatus[] status = new ItemStatus[1];
    claimAcrossTheSwitch(
        inbox(),
        () -> {
          try (Connection c = begin()) {
            callers.set(c);
            try {
              status[0] = batchWithEffect(joining, List.of("k", "k2"));
              c.commit();
            } finally {
              callers.remove();
            }
          }
          return null;
        });
    assertThat(status[0]).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects("k")).isEqualTo(1);
    assertThat(effects("k2")).as("the batch's new key, committed by the caller").isEqualTo(1);
    assertThat(generationOf("k2")).isEqualTo(1);
    assertThat(keysStoredTwice()).isZero();
  }

  /** Held: execute's reservation waits for the key's lock and then reads the committed row. */
  @Test
  void an_execute_just_after_a_switch_answers_duplicate() throws Exception {
    Inbox inbox = inbox();
    ClaimOutcome outcome =
        claimAcrossTheSwitch(inbox, () -> executeWithEffect(inbox, "k").claim()).outcome();
    assertThat(outcome).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("k")).isEqualTo(1);
    assertThat(keysStoredTwice()).isZero();
  }

  /** Held: a batch's first statement gets the guard's 40001 and starts again on the full path. */
  @Test
  void a_batch_of_its_own_just_after_a_switch_answers_duplicate() throws Exception {
    Inbox inbox = inbox();
    ItemStatus[] status = new ItemStatus[1];
    claimAcrossTheSwitch(
        inbox,
        () -> {
          status[0] = batchWithEffect(inbox, List.of("k", "k2"));
          return null;
        });
    assertThat(status[0]).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects("k")).isEqualTo(1);
    assertThat(keysStoredTwice()).isZero();
  }

  /** A pool whose transactions are REPEATABLE READ unless told otherwise (Hikari's setting). */
  private HikariDataSource repeatableReadPool() {
    HikariConfig config = new HikariConfig();
    dataSource.copyStateTo(config);
    config.setMaximumPoolSize(4);
    config.setPoolName("review-rr");
    config.setTransactionIsolation("TRANSACTION_REPEATABLE_READ");
    return new HikariDataSource(config);
  }

  private Inbox inboxOn(HikariDataSource pool) {
    Inbox inbox =
        Inbox.builder().dataSource(pool).settings(settings().build()).migrate(true).build();
    inboxes.add(inbox);
    return inbox;
  }

  /**
   * Claims on a REPEATABLE READ pool work (the inbox sets READ COMMITTED on its own transactions),
   * but the retention's carry-over moves rows through the key guard in the pool's default
   * isolation.
   */
  @Test
  void the_retention_retires_a_generation_on_a_repeatable_read_pool() throws Exception {
    try (HikariDataSource rr = repeatableReadPool()) {
      Inbox inbox = inboxOn(rr);
      executeFailing(inbox, "failed");
      assertThat(executeWithEffect(inbox, "done").outcome()).isEqualTo(ClaimOutcome.NEW);
      Generations generations = new Generations(rr, inbox.settings());
      assertThat(generations.rotate(true)).isTrue();
      generationStartedEarlier(1, RETENTION.plusMinutes(1));
      generations.retire();
      try (Connection c = rr.getConnection()) {
        assertThat(generations.state(c, 0)).isEqualTo(PartitionState.MISSING);
      }
      assertThat(generationOf("failed")).isEqualTo(1);
    }
  }

  @Test
  void an_operator_settles_a_key_without_a_record_on_a_repeatable_read_pool() throws Exception {
    try (HikariDataSource rr = repeatableReadPool()) {
      Inbox inbox = inboxOn(rr);
      assertThat(executeWithEffect(inbox, "claimed").outcome()).isEqualTo(ClaimOutcome.NEW);
      StoredResult result = StoredResult.of(200, "by hand".getBytes(StandardCharsets.UTF_8));
      assertThat(
              inbox.admin().settle(SCOPE, "never-claimed", result, AdminAction.of("ops", "review")))
          .isEqualTo(SettleResult.SETTLED);
    }
  }

  /**
   * The carry-over moves every kept row through the key guard, which takes one advisory lock per
   * row until the row's transaction commits: in one transaction, a generation with more kept rows
   * (given-up keys stay FAILED and are carried over at every retirement) than the shared lock table
   * holds (max_locks_per_transaction x max_connections, 6 400 at CI's 100 connections) could never
   * be carried over (3 001 advisory locks were seen on its backend for 3 000 failed rows). Stopped
   * in its last chunk by the last row's key lock, the carry-over's locks are counted: at most one
   * chunk's, and the pass lock.
   */
  @Test
  void the_carry_over_holds_a_bounded_number_of_locks_whatever_the_failed_keys() throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(30)).leaseDuration(Duration.ofMinutes(2)));
    int failed = 3000;
    insertGivenUpKeys(failed);
    Generations generations = generations(inbox);
    assertThat(generations.rotate(true)).isTrue();
    generationStartedEarlier(1, RETENTION.plusMinutes(1));
    ExecutorService retention = Executors.newSingleThreadExecutor();
    long locksHeld;
    long carriedMeanwhile;
    try (Connection blocker = begin()) {
      // The last row's key lock: the blocker locks no relation, so the retention's wait for
      // lockers lets it through, and the carry-over stops at that row in its last chunk.
      lockKey(blocker, givenUpKey(failed));
      int blockerPid = pid(blocker);
      Future<Long> retired = retention.submit(() -> generations.retire());
      String carrier =
          "SELECT pid FROM pg_stat_activity WHERE " + blockerPid + " = ANY(pg_blocking_pids(pid))";
      Await.until(
          "the carry-over waits for the last row",
          Duration.ofMinutes(2),
          () -> queryLong("SELECT count(*) FROM (" + carrier + ") AS c") == 1);
      locksHeld =
          queryLong(
              "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = ("
                  + carrier
                  + ")");
      carriedMeanwhile = rowsIn(1);
      blocker.rollback();
      assertThat(retired.get()).as("rows dropped with generation 0").isZero();
    } finally {
      retention.shutdownNow();
    }
    System.out.printf("carry-over of %d failed keys held %d advisory locks%n", failed, locksHeld);
    assertThat(locksHeld)
        .as("advisory locks held by the carry-over: one chunk's keys and the pass lock")
        .isLessThanOrEqualTo(Generations.CARRY_OVER_CHUNK + 1);
    int lastChunk = (failed - 1) % Generations.CARRY_OVER_CHUNK + 1;
    assertThat(carriedMeanwhile)
        .as("rows of the chunks before the last, committed while it waits")
        .isEqualTo(failed - lastChunk);
    assertCarriedOnce(generations, failed);
  }

  /**
   * The carry-over stopped in its second chunk by a key lock held past lockTimeout: the first chunk
   * stays carried over, generation 0 stays attached with the rest, and the next pass carries the
   * rest over and retires it, every row arriving once.
   */
  @Test
  void a_carry_over_stopped_by_a_lock_timeout_is_finished_by_the_next_pass() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofSeconds(1)));
    int failed = Generations.CARRY_OVER_CHUNK + 10;
    insertGivenUpKeys(failed);
    Generations generations = generations(inbox);
    assertThat(generations.rotate(true)).isTrue();
    generationStartedEarlier(1, RETENTION.plusMinutes(1));
    try (Connection blocker = begin()) {
      lockKey(blocker, givenUpKey(failed));
      assertThat(generations.retire()).isZero();
      try (Connection c = dataSource.getConnection()) {
        assertThat(generations.state(c, 0)).isEqualTo(PartitionState.ATTACHED);
      }
      assertThat(rowsIn(1))
          .as("the first chunk, committed")
          .isEqualTo(Generations.CARRY_OVER_CHUNK);
      assertThat(rowsIn(0)).isEqualTo(failed - Generations.CARRY_OVER_CHUNK);
      blocker.rollback();
    }
    assertThat(generations.retire()).isZero();
    assertCarriedOnce(generations, failed);
  }

  /**
   * The keys, each failed once, in generation 0, which is then due for retirement (generation 1
   * started more than the retention ago): the carry-over keeps them.
   */
  private Generations retiringGenerationOfFailedKeys(Inbox inbox, String... keys)
      throws SQLException {
    for (String key : keys) {
      executeFailing(inbox, key);
    }
    Generations generations = generations(inbox);
    assertThat(generations.rotate(true)).isTrue();
    generationStartedEarlier(1, RETENTION.plusMinutes(1));
    return generations;
  }

  /** Given-up keys f00001... in generation 0, written 30 days ago: all kept by the carry-over. */
  private void insertGivenUpKeys(int count) throws SQLException {
    sql(
        "INSERT INTO "
            + schema
            + ".inbox (scope, key, state, attempts, last_error, created_at, updated_at)"
            + " SELECT 's', 'f' || lpad(i::text, 5, '0'), 'FAILED', 5, 'gave up',"
            + " now() - interval '30 days', now() - interval '30 days'"
            + " FROM generate_series(1, "
            + count
            + ") AS i");
  }

  private static String givenUpKey(int i) {
    return "f" + String.format("%05d", i);
  }

  private long rowsIn(int generation) throws SQLException {
    return queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE generation = " + generation);
  }

  /** Generation 0 retired, and each of its kept rows in generation 1 once, still given up. */
  private void assertCarriedOnce(Generations generations, int kept) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      assertThat(generations.state(c, 0)).isEqualTo(PartitionState.MISSING);
    }
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox")).isEqualTo(kept);
    assertThat(
            queryLong(
                "SELECT count(DISTINCT key) FROM "
                    + schema
                    + ".inbox WHERE generation = 1 AND state = 'FAILED' AND attempts = 5"))
        .isEqualTo(kept);
    assertThat(keysStoredTwice()).isZero();
  }

  /**
   * The retention waits at most lockTimeout for the lockers of the retiring partition when it
   * starts, but the DETACH CONCURRENTLY that follows the carry-over waits, without a bound, for
   * every transaction that uses the table: one caller's transaction that began after that check and
   * sits idle keeps the janitor (and, through the pass lock, every node's rotation and retention)
   * waiting as long as it stays open. Claims go on meanwhile. The carry-over is held up by the
   * carried key's lock until the idle transaction has begun.
   */
  @Test
  void the_retention_gives_up_on_a_transaction_idle_since_after_its_check() throws Exception {
    Duration lockTimeout = Duration.ofSeconds(20);
    Inbox inbox = inbox(s -> s.lockTimeout(lockTimeout).leaseDuration(Duration.ofMinutes(2)));
    executeFailing(inbox, "carried");
    Generations generations = generations(inbox);
    assertThat(generations.rotate(true)).isTrue();
    generationStartedEarlier(1, RETENTION.plusMinutes(1));
    ExecutorService retention = Executors.newSingleThreadExecutor();
    try (Connection blocker = begin();
        Connection idle = begin()) {
      lockKey(blocker, "carried");
      int blockerPid = pid(blocker);
      Future<Long> retired = retention.submit(() -> generations.retire());
      awaitBlockedBy("the carry-over waits for the carried key's lock", blockerPid, 1);
      // A caller's transaction, begun after the retention's check, that claims a key and idles.
      assertThat(inbox.claim(idle, SCOPE, "idle", null).isNew()).isTrue();
      int idlePid = pid(idle);
      blocker.rollback();
      awaitBlockedBy("the detach waits for the idle transaction", idlePid, 1);
      assertThat(executeWithEffect(inbox, "during").outcome())
          .as("claims go on while the detach waits")
          .isEqualTo(ClaimOutcome.NEW);
      try {
        Await.until(
            "the retention's pass ends within a few lockTimeouts",
            lockTimeout.multipliedBy(6),
            retired::isDone);
      } finally {
        idle.rollback();
        retired.get();
      }
    } finally {
      retention.shutdownNow();
    }
  }

  /**
   * The carry-over and a batch's upsert both lock each key and then its row, in key order. Failed
   * keys b then a (written in that order) and a batch of [a, b]: both queue behind a third
   * transaction that holds b's key lock. Held: both end with every key carried over and completed
   * once.
   */
  @Test
  void a_batch_retrying_failed_keys_while_the_carry_over_moves_them_both_complete()
      throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(30)).leaseDuration(Duration.ofMinutes(2)));
    Generations generations = retiringGenerationOfFailedKeys(inbox, "b", "a");
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (Connection blocker = begin()) {
      lockKey(blocker, "b");
      int blockerPid = pid(blocker);
      Future<Long> retired = threads.submit(() -> generations.retire());
      awaitBlockedBy("the carry-over waits for b", blockerPid, 1);
      Future<ItemStatus> batch = threads.submit(() -> batchWithEffect(inbox, List.of("a", "b")));
      // The batch queues behind the carry-over, which is first in b's queue.
      Await.until(
          "the batch waits behind the carry-over",
          Duration.ofMinutes(2),
          () ->
              queryLong(
                      "SELECT count(*) FROM pg_stat_activity WHERE cardinality(pg_blocking_pids(pid))"
                          + " > 0 AND NOT "
                          + blockerPid
                          + " = ANY(pg_blocking_pids(pid))")
                  == 1);
      blocker.rollback();
      ItemStatus first = batch.get();
      retired.get();
      assertThat(first).isEqualTo(ItemStatus.COMPLETED);
    } finally {
      threads.shutdownNow();
    }
    try (Connection c = dataSource.getConnection()) {
      assertThat(generations.state(c, 0)).isEqualTo(PartitionState.MISSING);
    }
    assertThat(effects("a")).isEqualTo(1);
    assertThat(effects("b")).isEqualTo(1);
    assertThat(keysStoredTwice()).isZero();
  }

  /**
   * A claim locks its key and then the key's row (the guard fires before the upsert's conflict
   * check); the carry-over must take the same order. A caller's transaction holds the key of a
   * failed key kept in the retiring generation (as `execute` does once its reservation was lost:
   * the key's lock, then a read, then the claim), so the carry-over waits for it; then the caller
   * claims the key. Had the carry-over locked the row before the key, the caller would now wait for
   * the row while the carry-over waits for the key: a deadlock, one side aborted with 40P01.
   */
  @Test
  void a_caller_holding_a_kept_key_claims_it_while_the_carry_over_waits_without_deadlock()
      throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(30)).leaseDuration(Duration.ofMinutes(2)));
    Generations generations = retiringGenerationOfFailedKeys(inbox, "a", "b");
    ExecutorService retention = Executors.newSingleThreadExecutor();
    try (Connection caller = begin()) {
      lockKey(caller, "a");
      Future<Long> retired = retention.submit(() -> generations.retire());
      awaitBlockedBy("the carry-over waits for a's key", pid(caller), 1);
      Claim claim = inbox.claim(caller, SCOPE, "a", null);
      assertThat(claim.isNew()).as("a failed once, so its retry runs").isTrue();
      effect(caller, "a");
      inbox.complete(caller, claim, null);
      caller.commit();
      assertThat(retired.get()).as("rows dropped with generation 0").isZero();
    } finally {
      retention.shutdownNow();
    }
    try (Connection c = dataSource.getConnection()) {
      assertThat(generations.state(c, 0)).isEqualTo(PartitionState.MISSING);
    }
    assertThat(effects("a")).isEqualTo(1);
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE generation = 1"))
        .as("a, completed within the retention, and b, failed, carried over")
        .isEqualTo(2);
    assertThat(keysStoredTwice()).isZero();
  }
}
