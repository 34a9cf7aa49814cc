package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * reserveAtStart holds a new key with an advisory lock and writes its record once, at the
 * completion; every other claimant still sees exactly one effect per key.
 */
class ReservationTest extends InboxTestSupport {
  private static final byte[] FINGERPRINT = Fingerprints.sha256("POST /payments {1}".getBytes());
  private final StoredResult created =
      StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));

  /** Reserves on a fresh transaction of the connection, which the caller then owns. */
  private static Reservation reserve(Inbox inbox, Connection tx, String key) throws Exception {
    tx.setAutoCommit(false);
    return inbox.reserveAtStart(tx, "s", key, FINGERPRINT);
  }

  @Test
  void a_new_key_has_no_record_until_the_completion_writes_it_whole() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Reservation reservation = reserve(inbox, tx, "k");
      assertThat(reservation.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(reservation.recordDeferred()).isTrue();
      effect(tx, "s", "k", 7);
      // Not even an uncommitted row: the claim wrote nothing.
      assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox")).isZero();

      inbox.completeAndCommit(tx, reservation, created);
    }
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
  void a_rolled_back_reservation_leaves_the_key_new() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      assertThat(reserve(inbox, tx, "k").isNew()).isTrue();
      effect(tx, "s", "k", 7);
      tx.rollback();
      assertThat(reserve(inbox, tx, "k").isNew()).as("the lock ended with the rollback").isTrue();
      tx.rollback();
    }
    assertThat(effects("k")).isZero();
    assertThat(inbox.admin().find("s", "k")).isEmpty();
  }

  @Test
  @Timeout(30)
  void a_second_reservation_of_a_held_key_answers_in_progress_without_waiting() throws Exception {
    // A reservation that waited would sit out this lock timeout and overrun the test's.
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofSeconds(120)));
    try (Connection first = dataSource.getConnection();
        Connection second = dataSource.getConnection()) {
      Reservation held = reserve(inbox, first, "k");
      assertThat(held.isNew()).isTrue();

      Reservation concurrent = reserve(inbox, second, "k");
      assertThat(concurrent.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
      second.rollback();

      effect(first, "s", "k", 7);
      inbox.completeAndCommit(first, held, created);

      Reservation retry = reserve(inbox, second, "k");
      assertThat(retry.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(retry.claim().result().orElseThrow().body())
          .contains(created.body().orElseThrow());
      second.rollback();
    }
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void settled_keys_are_answered_from_their_record() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    try (Connection tx = dataSource.getConnection()) {
      inbox.completeAndCommit(tx, reserve(inbox, tx, "done"), created);

      Reservation replay = reserve(inbox, tx, "done");
      assertThat(replay.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      tx.rollback();

      tx.setAutoCommit(false);
      Reservation other = inbox.reserveAtStart(tx, "s", "done", Fingerprints.sha256(new byte[1]));
      assertThat(other.outcome()).isEqualTo(ClaimOutcome.MISMATCH);
      tx.rollback();

      Reservation failing = reserve(inbox, tx, "poison");
      tx.rollback();
      inbox.recordFailure(failing, "the handler threw");
      assertThat(reserve(inbox, tx, "poison").outcome()).isEqualTo(ClaimOutcome.GAVE_UP);
      tx.rollback();
    }
  }

  @Test
  void a_failed_key_is_claimed_again_through_its_record() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    try (Connection tx = dataSource.getConnection()) {
      Reservation first = reserve(inbox, tx, "k");
      tx.rollback();
      inbox.recordFailure(first, "the handler answered 503");
      InboxRecord failed = inbox.admin().find("s", "k").orElseThrow();
      assertThat(failed.state()).isEqualTo(RecordState.FAILED);
      assertThat(failed.attempts()).isEqualTo(1);

      Reservation second = reserve(inbox, tx, "k");
      assertThat(second.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(second.recordDeferred()).isFalse();
      assertThat(second.claim().attempts()).isEqualTo(2);
      effect(tx, "s", "k", 7);
      inbox.completeAndCommit(tx, second, created);
    }
    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.attempts()).isEqualTo(2);
    assertThat(row.fingerprint())
        .as("written by the claim that took it over")
        .isEqualTo(FINGERPRINT);
    assertThat(row.result().status()).isEqualTo(201);
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void a_claim_that_records_the_key_first_makes_the_completion_commit_nothing() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Reservation reservation = reserve(inbox, tx, "k");
      effect(tx, "s", "k", 7);

      // A consumer's claim does not look at reservations, and gets there first.
      Execution consumer =
          inbox.execute(
              "s",
              "k",
              other -> {
                effect(other, "s", "k", 7);
                return StoredResult.of(200, "by the consumer".getBytes(StandardCharsets.UTF_8));
              });
      assertThat(consumer.executed()).isTrue();

      assertThatThrownBy(() -> inbox.completeAndCommit(tx, reservation, created))
          .isInstanceOf(ReservationLostException.class)
          .hasMessageContaining("key 'k' in scope 's'")
          .hasMessageContaining("recorded the key first");
      tx.rollback();

      Reservation again = reserve(inbox, tx, "k");
      assertThat(again.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(again.claim().result().orElseThrow().status()).isEqualTo(200);
      tx.rollback();
    }
    assertThat(effects("k")).as("only the consumer's effect").isEqualTo(1);
  }

  @Test
  void a_claim_still_open_past_the_lock_timeout_makes_the_completion_commit_nothing()
      throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(300)));
    try (Connection tx = dataSource.getConnection()) {
      Reservation reservation = reserve(inbox, tx, "k");
      effect(tx, "s", "k", 7);
      // Its row is uncommitted, so the reservation's read could not see it.
      try (HeldKey consumer = HeldKey.hold(inbox, "s", "k")) {
        assertThatThrownBy(() -> inbox.completeAndCommit(tx, reservation, created))
            .isInstanceOf(ReservationLostException.class)
            .hasMessageContaining("still open after lockTimeout");
        tx.rollback();
      }
    }
    assertThat(effects("k")).as("the reservation's effect was rolled back").isZero();
    assertThat(inbox.admin().find("s", "k").orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void complete_on_the_callers_transaction_writes_the_record_for_its_commit() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Reservation reservation = reserve(inbox, tx, "k");
      effect(tx, "s", "k", 7);
      inbox.complete(tx, reservation, created);
      assertThat(inbox.admin().find("s", "k")).as("not before the caller commits").isEmpty();
      tx.commit();
    }
    assertThat(inbox.admin().find("s", "k").orElseThrow().result().status()).isEqualTo(201);
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void a_terminated_backend_commits_nothing_and_frees_the_key() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Reservation reservation = reserve(inbox, tx, "k");
      effect(tx, "s", "k", 7);
      long pid;
      try (PreparedStatement ps = tx.prepareStatement("SELECT pg_backend_pid()");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        pid = rs.getLong(1);
      }
      sql("SELECT pg_terminate_backend(" + pid + ")");
      assertThatThrownBy(() -> inbox.completeAndCommit(tx, reservation, created))
          .isInstanceOf(InboxDatabaseException.class);
    }
    assertThat(effects("k")).isZero();
    try (Connection tx = dataSource.getConnection()) {
      Reservation retry = reserve(inbox, tx, "k");
      assertThat(retry.isNew()).as("no lock or row outlived the backend").isTrue();
      effect(tx, "s", "k", 7);
      inbox.completeAndCommit(tx, retry, created);
    }
    assertThat(effects("k")).isEqualTo(1);
  }

  /**
   * 32 threads on one key, half reserving as an HTTP API does and half executing as a consumer
   * does, each retrying until it gets an answer: exactly one effect, and every thread ends with
   * that effect's result.
   */
  @Test
  @Timeout(120)
  void thirty_two_threads_reserving_and_executing_one_key_apply_it_exactly_once() throws Exception {
    Inbox inbox = inbox();
    int threads = 32;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Integer>> statuses = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      boolean reserving = i % 2 == 0;
      statuses.add(
          pool.submit(
              () -> {
                start.await();
                return reserving ? reserveUntilAnswered(inbox) : executeUntilAnswered(inbox);
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

  /** An HTTP API's loop: reserve, poll while in progress, reserve again after a lost one. */
  private int reserveUntilAnswered(Inbox inbox) throws Exception {
    try (Connection tx = dataSource.getConnection()) {
      while (true) {
        Reservation reservation = reserve(inbox, tx, "one");
        switch (reservation.outcome()) {
          case NEW -> {
            effect(tx, "s", "one", 1);
            Thread.sleep(20); // hold the key while others arrive
            try {
              inbox.completeAndCommit(tx, reservation, StoredResult.of(201, new byte[0]));
              return 201;
            } catch (ReservationLostException e) {
              tx.rollback();
            }
          }
          case DUPLICATE -> {
            tx.rollback();
            return reservation.claim().result().orElseThrow().status();
          }
          case IN_PROGRESS -> {
            tx.rollback();
            Thread.sleep(5);
          }
          default -> throw new AssertionError("unexpected " + reservation.outcome());
        }
      }
    }
  }

  /** A consumer's loop: execute until the key is new or a duplicate. */
  private int executeUntilAnswered(Inbox inbox) throws Exception {
    while (true) {
      Execution run =
          inbox.execute(
              "s",
              "one",
              tx -> {
                effect(tx, "s", "one", 1);
                Thread.sleep(20);
                return StoredResult.of(200, new byte[0]);
              });
      switch (run.outcome()) {
        case NEW:
          return 200;
        case DUPLICATE:
          return run.result().status();
        case IN_PROGRESS:
          Thread.sleep(5);
          break;
        default:
          throw new AssertionError("unexpected " + run.outcome());
      }
    }
  }
}
