package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code execute} reserves a key that has no record: it holds the key's advisory lock and writes
 * the record once, COMPLETED with the result, in the commit's round trip. Another {@code execute}
 * waits for that lock; a claimant that does not look at it and records the key first makes the
 * reserved run commit nothing. Every claimant still sees exactly one effect per key.
 */
class ReservationTest extends InboxTestSupport {
  private static final byte[] FINGERPRINT = Fingerprints.sha256("POST /payments {1}".getBytes());
  private final StoredResult created =
      StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));

  /** Then, in a handler after its effect. */
  private interface AfterEffect {
    void run(Connection tx) throws Exception;
  }

  /** A handler that writes k's effect, runs {@code then}, and returns {@code created}. */
  private TransactionalHandler paying(AfterEffect then) {
    return tx -> {
      effect(tx, "s", "k", 7);
      then.run(tx);
      return created;
    };
  }

  private String inboxRowOf(String key) {
    return "SELECT count(*) FROM " + schema + ".inbox WHERE scope = 's' AND key = '" + key + "'";
  }

  @Test
  void a_new_key_has_no_record_until_the_commit_writes_it_whole() throws Exception {
    Inbox inbox = inbox();
    AtomicLong rowsSeenByTheHandler = new AtomicLong(-1);
    Execution run =
        inbox.execute(
            "s",
            "k",
            FINGERPRINT,
            paying(tx -> rowsSeenByTheHandler.set(queryLong(tx, inboxRowOf("k")))));
    assertThat(run.outcome()).isEqualTo(ClaimOutcome.NEW);
    // Not even an uncommitted row in the handler's own transaction: the claim wrote nothing.
    assertThat(rowsSeenByTheHandler).hasValue(0);

    assertThat(effects("k")).isEqualTo(1);
    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.attempts()).isEqualTo(1);
    assertThat(row.fingerprint()).isEqualTo(FINGERPRINT);
    assertThat(row.result().status()).isEqualTo(201);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
    assertThat(row.completedAt()).isNotNull();
  }

  @Test
  void a_rolled_back_run_leaves_the_key_new() throws Exception {
    Inbox inbox = inbox();
    AtomicInteger runs = new AtomicInteger();
    TransactionalHandler rolledBack =
        tx -> {
          runs.incrementAndGet();
          effect(tx, "s", "k", 7);
          throw serializationFailure();
        };
    assertThatThrownBy(() -> inbox.execute("s", "k", FINGERPRINT, rolledBack))
        .isInstanceOf(InboxDatabaseException.class);
    assertThatThrownBy(() -> inbox.execute("s", "k", FINGERPRINT, rolledBack))
        .isInstanceOf(InboxDatabaseException.class);
    // A handler runs only for a NEW claim.
    assertThat(runs).as("the lock ended with the rollback: the key was new again").hasValue(2);
    assertThat(effects("k")).isZero();
    assertThat(inbox.admin().find("s", "k")).isEmpty();
  }

  @Test
  @Timeout(30)
  void a_second_execute_of_a_held_key_waits_for_it_and_then_answers_duplicate() throws Exception {
    // A wait that ended by the lock timeout would overrun the test's.
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofSeconds(120)));
    AtomicInteger secondRuns = new AtomicInteger();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (HeldKey first = reservedWithEffect(inbox, new AtomicInteger())) {
      Future<Execution> second =
          pool.submit(
              () ->
                  inbox.execute("s", "k", FINGERPRINT, paying(tx -> secondRuns.incrementAndGet())));
      awaitBlockedBy(first.pid(), second);

      assertThat(first.execution().outcome()).isEqualTo(ClaimOutcome.NEW);
      Execution answer = second.get(10, TimeUnit.SECONDS);
      assertThat(answer.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(answer.result().body()).contains(created.body().orElseThrow());
    } finally {
      pool.shutdown();
    }
    assertThat(secondRuns).as("runs of the second handler").hasValue(0);
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void a_second_execute_of_a_key_held_past_the_lock_timeout_answers_in_progress() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(300)));
    AtomicInteger secondRuns = new AtomicInteger();
    try (HeldKey first = reservedWithEffect(inbox, new AtomicInteger())) {
      Execution second =
          inbox.execute("s", "k", FINGERPRINT, paying(tx -> secondRuns.incrementAndGet()));
      assertThat(second.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
    }
    assertThat(secondRuns).as("runs of the second handler").hasValue(0);
    assertThat(effects("k")).isEqualTo(1);
    assertThat(inbox.admin().find("s", "k").orElseThrow().result().status()).isEqualTo(201);
  }

  @Test
  void settled_keys_are_answered_from_their_record() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    AtomicInteger runs = new AtomicInteger();
    TransactionalHandler counted =
        tx -> {
          runs.incrementAndGet();
          return created;
        };
    assertThat(inbox.execute("s", "done", FINGERPRINT, counted).outcome())
        .isEqualTo(ClaimOutcome.NEW);

    Execution replay = inbox.execute("s", "done", FINGERPRINT, counted);
    assertThat(replay.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(replay.result().status()).isEqualTo(201);
    assertThat(inbox.execute("s", "done", Fingerprints.sha256(new byte[1]), counted).outcome())
        .isEqualTo(ClaimOutcome.MISMATCH);

    executeFailing(inbox, "s", "poison", FINGERPRINT);
    assertThat(inbox.execute("s", "poison", FINGERPRINT, counted).outcome())
        .isEqualTo(ClaimOutcome.GAVE_UP);
    assertThat(runs).as("handler runs: the first of 'done' only").hasValue(1);
  }

  @Test
  void a_failed_key_is_claimed_again_through_its_record() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    executeFailing(inbox, "s", "k", FINGERPRINT);
    InboxRecord failed = inbox.admin().find("s", "k").orElseThrow();
    assertThat(failed.state()).isEqualTo(RecordState.FAILED);
    assertThat(failed.attempts()).isEqualTo(1);

    AtomicReference<String> stateSeenByTheHandler = new AtomicReference<>();
    Execution second =
        inbox.execute(
            "s",
            "k",
            FINGERPRINT,
            paying(
                tx ->
                    stateSeenByTheHandler.set(
                        queryString(
                            tx,
                            "SELECT state FROM "
                                + schema
                                + ".inbox WHERE scope = 's' AND key = 'k'"))));
    assertThat(second.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(second.claim().attempts()).isEqualTo(2);
    assertThat(stateSeenByTheHandler)
        .as("claimed through its row, written in its final state before the handler ran")
        .hasValue("COMPLETED");

    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.attempts()).isEqualTo(2);
    assertThat(row.fingerprint()).as("kept from the first attempt").isEqualTo(FINGERPRINT);
    assertThat(row.result().status()).isEqualTo(201);
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void
      a_claim_on_a_callers_transaction_that_records_the_key_first_wins_and_the_reserved_run_commits_nothing()
          throws Exception {
    assumeTableStorage(A_CLAIM_WAITS_FOR_THE_RESERVATION);
    Inbox inbox = inbox();
    AtomicInteger runs = new AtomicInteger();
    Execution run;
    try (HeldKey reserved = reservedWithEffect(inbox, runs);
        Connection tx = dataSource.getConnection()) {
      // A claim on a caller's transaction does not look at reservations, and gets there first.
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "s", "k", FINGERPRINT);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      effect(tx, "s", "k", 7);
      inbox.complete(tx, claim, StoredResult.of(200, "by the caller".getBytes()));
      tx.commit();
      run = reserved.execution();
    }
    assertThat(run.outcome()).as("the claimant's outcome").isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(run.result().status()).isEqualTo(200);
    assertThat(runs).as("handler runs of the reserved execute").hasValue(1);
    assertThat(effects("k")).as("only the claimant's effect").isEqualTo(1);
    assertThat(inbox.admin().find("s", "k").orElseThrow().attempts()).isEqualTo(1);
  }

  @Test
  void a_consumers_batch_that_records_the_key_first_wins_and_the_reserved_run_commits_nothing()
      throws Exception {
    assumeTableStorage(A_CLAIM_WAITS_FOR_THE_RESERVATION);
    Inbox inbox = inbox();
    AtomicInteger runs = new AtomicInteger();
    Execution run;
    try (HeldKey reserved = reservedWithEffect(inbox, runs)) {
      // A consumer's claim does not look at reservations either.
      ItemResult<Long> consumer =
          inbox
              .executeBatch(
                  "s",
                  List.of(new BatchItem<>("k", FINGERPRINT, 7L)),
                  BatchFailurePolicy.CONTINUE,
                  (item, tx) -> {
                    effect(tx, "s", "k", item.payload());
                    return StoredResult.of(200, "by the consumer".getBytes());
                  })
              .items()
              .get(0);
      assertThat(consumer.status()).isEqualTo(ItemStatus.COMPLETED);
      run = reserved.execution();
    }
    assertThat(run.outcome()).as("the consumer's outcome").isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(run.result().status()).isEqualTo(200);
    assertThat(runs).as("handler runs of the reserved execute").hasValue(1);
    assertThat(effects("k")).as("only the consumer's effect").isEqualTo(1);
  }

  /** {@code execute} of "k" holding its reservation; once released, writes one effect. */
  private HeldKey reservedWithEffect(Inbox inbox, AtomicInteger runs) throws Exception {
    return HeldKey.reserved(inbox, "s", "k", FINGERPRINT, paying(tx -> runs.incrementAndGet()));
  }

  @Test
  void a_claim_still_open_past_the_lock_timeout_makes_the_reserved_run_commit_nothing()
      throws Exception {
    assumeTableStorage(A_CLAIM_WAITS_FOR_THE_RESERVATION);
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(300)));
    AtomicInteger runs = new AtomicInteger();
    Execution run;
    // The batch's row is uncommitted: the reservation's read could not see it, and its insert
    // waits for it past the lock timeout.
    try (HeldKey reserved = reservedWithEffect(inbox, runs);
        HeldKey consumer = HeldKey.claimed(inbox, "s", "k")) {
      run = reserved.execution();
    }
    assertThat(run.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
    assertThat(runs).as("handler runs of the reserved execute").hasValue(1);
    assertThat(effects("k")).as("the reserved run's effect was rolled back").isZero();
    assertThat(inbox.admin().find("s", "k").orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void execute_on_a_callers_transaction_leaves_the_record_to_its_commit() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Execution run = joining(tx).execute("s", "k", FINGERPRINT, paying(joined -> {}));
      assertThat(run.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(inbox.admin().find("s", "k")).as("not before the caller commits").isEmpty();
      tx.commit();
    }
    assertThat(inbox.admin().find("s", "k").orElseThrow().result().status()).isEqualTo(201);
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void a_terminated_backend_commits_nothing_and_frees_the_key() throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                inbox.execute(
                    "s",
                    "k",
                    FINGERPRINT,
                    // Waits until the backend is gone: its transaction and lock with it.
                    paying(
                        tx ->
                            sql(
                                "SELECT pg_terminate_backend("
                                    + HeldKey.backendPid(tx)
                                    + ", 10000)"))))
        .isInstanceOf(InboxDatabaseException.class);
    assertThat(effects("k")).isZero();
    assertThat(inbox.admin().find("s", "k")).isEmpty();

    Execution retry = inbox.execute("s", "k", FINGERPRINT, paying(tx -> {}));
    assertThat(retry.executed()).as("no lock or row outlived the backend").isTrue();
    assertThat(effects("k")).isEqualTo(1);
  }

  /**
   * 32 threads on one key, half executing as the HTTP filter does and half delivering it in a batch
   * as a consumer does, each retrying until it gets an answer: exactly one effect, and every thread
   * ends with that effect's result.
   */
  @Test
  @Timeout(120)
  void thirty_two_threads_executing_and_delivering_one_key_apply_it_exactly_once()
      throws Exception {
    Inbox inbox = inbox();
    int threads = 32;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Integer>> statuses = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      boolean executing = i % 2 == 0;
      statuses.add(
          pool.submit(
              () -> {
                start.await();
                return executing ? executeUntilAnswered(inbox) : deliverUntilAnswered(inbox);
              }));
    }
    start.countDown();
    List<Integer> answered = new ArrayList<>();
    for (Future<Integer> status : statuses) {
      answered.add(status.get(100, TimeUnit.SECONDS));
    }
    pool.shutdown();

    assertThat(effects("one")).as("effects of 32 concurrent claimants").isEqualTo(1);
    int winner = inbox.admin().find("s", "one").orElseThrow().result().status();
    assertThat(answered).as("every thread's answer is the one stored").containsOnly(winner);
  }

  /** Runs {@code attempt} until it answers; null means the key was in progress. */
  private static int untilAnswered(Callable<Integer> attempt) throws Exception {
    for (Integer status = attempt.call(); ; status = attempt.call()) {
      if (status != null) {
        return status;
      }
      Thread.sleep(5);
    }
  }

  /** The HTTP filter's way: execute until the key is new or a duplicate. */
  private int executeUntilAnswered(Inbox inbox) throws Exception {
    return untilAnswered(
        () -> {
          Execution run =
              inbox.execute(
                  "s",
                  "one",
                  tx -> {
                    effect(tx, "s", "one", 1);
                    Thread.sleep(20); // hold the key while others arrive
                    return StoredResult.of(201, new byte[0]);
                  });
          return switch (run.outcome()) {
            case NEW, DUPLICATE -> run.result().status();
            case IN_PROGRESS -> null;
            default -> throw new AssertionError("unexpected " + run.outcome());
          };
        });
  }

  /** A consumer's way: deliver in a batch of one until the key is done or a duplicate. */
  private int deliverUntilAnswered(Inbox inbox) throws Exception {
    return untilAnswered(
        () -> {
          ItemResult<Long> item =
              inbox
                  .executeBatch(
                      "s",
                      List.of(BatchItem.of("one", 1L)),
                      BatchFailurePolicy.CONTINUE,
                      (delivered, tx) -> {
                        effect(tx, "s", "one", delivered.payload());
                        Thread.sleep(20);
                        return StoredResult.of(200, new byte[0]);
                      })
                  .items()
                  .get(0);
          return switch (item.status()) {
            case COMPLETED, DUPLICATE -> item.result().status();
            case IN_PROGRESS -> null;
            default -> throw new AssertionError("unexpected " + item.status());
          };
        });
  }
}
