package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import dev.inbox.spi.InboxListener;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TransactionalModeTest extends InboxTestSupport {

  @Test
  void thirty_two_threads_on_one_key_execute_the_handler_exactly_once() throws Exception {
    Inbox inbox = inbox();
    int threads = 32;
    AtomicInteger executions = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Execution>> futures = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      futures.add(
          pool.submit(
              () -> {
                start.await();
                return inbox.execute(
                    "payments",
                    "pay-1",
                    tx -> {
                      executions.incrementAndGet();
                      effect(tx, "payments", "pay-1", 100);
                      Thread.sleep(200); // keep the claim open while the others arrive
                      return StoredResult.of(201, "{\"id\":1}".getBytes(StandardCharsets.UTF_8));
                    });
              }));
    }
    start.countDown();
    List<Execution> results = new ArrayList<>();
    for (Future<Execution> f : futures) {
      results.add(f.get(60, TimeUnit.SECONDS));
    }
    pool.shutdown();

    assertThat(executions).as("handler executions for 32 concurrent claims").hasValue(1);
    assertThat(effects()).as("effect rows").isEqualTo(1);
    assertThat(results).filteredOn(Execution::executed).hasSize(1);
    List<Execution> duplicates =
        results.stream().filter(e -> e.outcome() == ClaimOutcome.DUPLICATE).toList();
    assertThat(duplicates).hasSize(31);
    assertThat(duplicates)
        .allSatisfy(
            d -> {
              assertThat(d.result().status()).isEqualTo(201);
              assertThat(new String(d.result().body().orElseThrow(), StandardCharsets.UTF_8))
                  .isEqualTo("{\"id\":1}");
            });
    assertThat(inbox.admin().find("payments", "pay-1"))
        .get()
        .extracting(InboxRecord::state)
        .isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void a_concurrent_claimant_sees_new_when_the_first_rolls_back() throws Exception {
    Inbox inbox = inbox();
    CountDownLatch firstClaimed = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<?> first =
        pool.submit(
            () ->
                inbox.execute(
                    "s",
                    "k",
                    tx -> {
                      effect(tx, "s", "k", 1);
                      firstClaimed.countDown();
                      Thread.sleep(300);
                      throw new IllegalStateException("first attempt fails");
                    }));
    firstClaimed.await();
    Execution second =
        inbox.execute(
            "s",
            "k",
            tx -> {
              effect(tx, "s", "k", 1);
              return null;
            });
    assertThatThrownBy(first::get).hasCauseInstanceOf(HandlerFailedException.class);
    pool.shutdown();

    assertThat(second.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(effects("k"))
        .as("the failed attempt left nothing; the second committed once")
        .isEqualTo(1);
    // The failed attempt is counted after its rollback, racing the second claimant; either order is
    // fine.
    assertThat(inbox.admin().find("s", "k").orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void a_claimant_waiting_past_the_lock_timeout_sees_in_progress() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(200)));
    CountDownLatch firstClaimed = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<Execution> first =
        pool.submit(
            () ->
                inbox.execute(
                    "s",
                    "slow",
                    tx -> {
                      firstClaimed.countDown();
                      release.await();
                      effect(tx, "s", "slow", 1);
                      return null;
                    }));
    firstClaimed.await();
    Execution second =
        inbox.execute(
            "s",
            "slow",
            tx -> {
              effect(tx, "s", "slow", 1);
              return null;
            });
    release.countDown();
    assertThat(second.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
    assertThat(first.get(10, TimeUnit.SECONDS).executed()).isTrue();
    pool.shutdown();
    assertThat(effects("slow")).isEqualTo(1);
    assertThat(inbox.execute("s", "slow", tx -> null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
  }

  @Test
  void a_terminated_backend_commits_nothing_and_the_next_claim_executes_once() throws Exception {
    Inbox inbox = inbox();
    AtomicLong backendPid = new AtomicLong();
    CountDownLatch blocked = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<Execution> crashing =
        pool.submit(
            () ->
                inbox.execute(
                    "s",
                    "crash",
                    tx -> {
                      effect(tx, "s", "crash", 1);
                      try (PreparedStatement ps = tx.prepareStatement("SELECT pg_backend_pid()");
                          ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        backendPid.set(rs.getLong(1));
                      }
                      blocked.countDown();
                      // Blocks in the database until the test kills this backend.
                      try (PreparedStatement ps = tx.prepareStatement("SELECT pg_sleep(30)")) {
                        ps.execute();
                      }
                      return null;
                    }));
    blocked.await();
    assertThat(queryLong("SELECT count(*) FROM pg_stat_activity WHERE pid = " + backendPid.get()))
        .isEqualTo(1);
    sql("SELECT pg_terminate_backend(" + backendPid.get() + ")");

    assertThatThrownBy(() -> crashing.get(30, TimeUnit.SECONDS))
        .hasCauseInstanceOf(InboxDatabaseException.class);
    pool.shutdown();
    assertThat(effects("crash")).as("nothing committed by the killed transaction").isZero();
    assertThat(inbox.admin().find("s", "crash")).as("no stuck key, no reaper needed").isEmpty();

    Execution retry =
        inbox.execute(
            "s",
            "crash",
            tx -> {
              effect(tx, "s", "crash", 1);
              return null;
            });
    assertThat(retry.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(effects("crash")).isEqualTo(1);
    assertThat(inbox.execute("s", "crash", tx -> null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
  }

  @Test
  void a_different_fingerprint_for_the_same_key_is_a_mismatch() throws Exception {
    Inbox inbox = inbox();
    byte[] first = Fingerprints.sha256("POST /payments {amount:100}");
    byte[] other = Fingerprints.sha256("POST /payments {amount:999}");
    assertThat(inbox.execute("s", "k", first, tx -> null).outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(inbox.execute("s", "k", first, tx -> null).outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    Execution mismatch =
        inbox.execute(
            "s",
            "k",
            other,
            tx -> {
              effect(tx, "s", "k", 1);
              return null;
            });
    assertThat(mismatch.outcome()).isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(effects()).isZero();
  }

  @Test
  void max_attempts_failures_give_up_and_release_makes_the_key_new_again() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    for (int attempt = 1; attempt <= 3; attempt++) {
      int expected = attempt;
      assertThatThrownBy(
              () ->
                  inbox.execute(
                      "s",
                      "poison",
                      tx -> {
                        effect(tx, "s", "poison", 1);
                        throw new IllegalArgumentException("cannot parse payload");
                      }))
          .isInstanceOfSatisfying(
              HandlerFailedException.class, e -> assertThat(e.attempts()).isEqualTo(expected));
    }
    InboxRecord failed = inbox.admin().find("s", "poison").orElseThrow();
    assertThat(failed.state()).isEqualTo(RecordState.FAILED);
    assertThat(failed.attempts()).isEqualTo(3);
    assertThat(failed.lastError()).contains("cannot parse payload");

    AtomicInteger runs = new AtomicInteger();
    Execution gaveUp =
        inbox.execute(
            "s",
            "poison",
            tx -> {
              runs.incrementAndGet();
              return null;
            });
    assertThat(gaveUp.outcome()).isEqualTo(ClaimOutcome.GAVE_UP);
    assertThat(runs).hasValue(0);
    assertThat(effects()).as("every failed attempt rolled back its writes").isZero();

    assertThat(inbox.admin().release("s", "poison")).isEqualTo(ReleaseResult.RELEASED);
    Execution afterRelease =
        inbox.execute(
            "s",
            "poison",
            tx -> {
              effect(tx, "s", "poison", 1);
              return null;
            });
    assertThat(afterRelease.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(effects("poison")).isEqualTo(1);
    assertThat(inbox.admin().release("s", "poison")).isEqualTo(ReleaseResult.NOT_RELEASABLE);
    assertThat(inbox.admin().release("s", "unknown")).isEqualTo(ReleaseResult.NOT_FOUND);
  }

  @Test
  void the_same_key_in_two_scopes_makes_two_independent_records() throws Exception {
    Inbox inbox = inbox();
    assertThat(
            inbox
                .execute(
                    "tenant-a",
                    "k",
                    tx -> {
                      effect(tx, "tenant-a", "k", 1);
                      return StoredResult.of(201, "a".getBytes(StandardCharsets.UTF_8));
                    })
                .executed())
        .isTrue();
    Execution b =
        inbox.execute(
            "tenant-b",
            "k",
            tx -> {
              effect(tx, "tenant-b", "k", 1);
              return StoredResult.of(201, "b".getBytes(StandardCharsets.UTF_8));
            });
    assertThat(b.executed()).isTrue();
    assertThat(effects("k")).isEqualTo(2);
    Execution replayB = inbox.execute("tenant-b", "k", tx -> null);
    assertThat(replayB.result().body().orElseThrow())
        .isEqualTo("b".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void stored_result_keeps_status_headers_and_body_and_a_hash_only_result_keeps_no_body()
      throws Exception {
    Inbox inbox = inbox();
    StoredResult full =
        StoredResult.of(
            201,
            Map.of("Content-Type", List.of("application/json"), "Link", List.of("<a>", "<b>")),
            "{\"ok\":true}".getBytes(StandardCharsets.UTF_8));
    inbox.execute("s", "full", tx -> full);
    assertThat(inbox.execute("s", "full", tx -> null).result()).isEqualTo(full);

    StoredResult hashed = StoredResult.withoutBody(200, Map.of(), Fingerprints.sha256("big"));
    inbox.execute("s", "big", tx -> hashed);
    StoredResult replay = inbox.execute("s", "big", tx -> null).result();
    assertThat(replay.bodyStored()).isFalse();
    assertThat(replay.bodySha256()).isEqualTo(Fingerprints.sha256("big"));
  }

  @Test
  void a_handler_that_throws_an_error_commits_neither_its_writes_nor_its_key() throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                inbox.execute(
                    "s",
                    "half-done",
                    tx -> {
                      effect(tx, "s", "half-done", 100);
                      throw new AssertionError("a bug in the handler, past every catch");
                    }))
        .isInstanceOf(AssertionError.class);
    assertThat(effects("half-done")).as("the handler's partial write").isZero();
    assertThat(inbox.admin().find("s", "half-done")).as("the key's record").isEmpty();

    Execution retry =
        inbox.execute(
            "s",
            "half-done",
            tx -> {
              effect(tx, "s", "half-done", 100);
              return null;
            });
    assertThat(retry.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(effects("half-done")).isEqualTo(1);
  }

  @Test
  void a_listener_that_throws_changes_no_outcome() throws Exception {
    InboxListener broken =
        new InboxListener() {
          @Override
          public void handled(String scope, boolean succeeded, Duration latency) {
            throw new IllegalArgumentException("a registry refused the meter");
          }

          @Override
          public void claimed(String scope, ClaimOutcome outcome, int count) {
            throw new IllegalArgumentException("a registry refused the meter");
          }
        };
    Inbox inbox = inbox(s -> s.listener(broken));
    Execution single =
        inbox.execute(
            "s",
            "one",
            tx -> {
              effect(tx, "s", "one", 1);
              return null;
            });
    BatchResult<Long> batch =
        inbox.executeBatch(
            "s",
            List.of(BatchItem.of("two", 2L), BatchItem.of("three", 3L)),
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "s", item.key(), item.payload());
              return null;
            });
    assertThat(single.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(batch.items()).extracting(ItemResult::status).containsOnly(ItemStatus.COMPLETED);
    assertThat(effects()).isEqualTo(3);
    assertThat(inbox.admin().find("s", "one").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
  }
}
