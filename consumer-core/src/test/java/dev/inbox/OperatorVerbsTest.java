package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The operators' verbs on real PostgreSQL: release and settle move a key exactly as the state
 * machine allows, fence off a late lease holder, and leave an audit entry in the same transaction.
 */
class OperatorVerbsTest extends InboxTestSupport {
  private static final AdminAction ALICE = AdminAction.of("alice", "INC-7: provider timed out");
  private static final StoredResult RECONCILED =
      StoredResult.of(
          201,
          Map.of("Content-Type", List.of("application/json")),
          "{\"id\":\"pay_1\"}".getBytes(StandardCharsets.UTF_8));

  @Test
  void a_released_key_is_claimed_again_exactly_once_by_32_threads() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    executeFailing(inbox, "payments", "p-1", null);
    assertThat(executeWithEffect(inbox, "payments", "p-1").outcome())
        .isEqualTo(ClaimOutcome.GAVE_UP);

    assertThat(inbox.admin().release("payments", "p-1", ALICE)).isEqualTo(ReleaseResult.RELEASED);

    List<ClaimOutcome> outcomes =
        storm(32, () -> executeWithEffect(inbox, "payments", "p-1").outcome(), futures -> {});
    assertThat(outcomes).filteredOn(o -> o == ClaimOutcome.NEW).hasSize(1);
    assertThat(outcomes).filteredOn(o -> o == ClaimOutcome.DUPLICATE).hasSize(31);
    assertThat(effects("p-1")).isEqualTo(1);
  }

  @Test
  void a_32_thread_storm_on_a_key_being_released_has_exactly_one_effect() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    executeFailing(inbox, "payments", "p-2", null);
    int threads = 32;
    AtomicInteger gaveUp = new AtomicInteger();
    List<ClaimOutcome> outcomes =
        storm(
            threads,
            () -> {
              // Each thread redelivers until the key is settled for it: NEW or DUPLICATE.
              while (true) {
                ClaimOutcome outcome = executeWithEffect(inbox, "payments", "p-2").outcome();
                if (outcome == ClaimOutcome.NEW || outcome == ClaimOutcome.DUPLICATE) {
                  return outcome;
                }
                assertThat(outcome).isIn(ClaimOutcome.GAVE_UP, ClaimOutcome.IN_PROGRESS);
                gaveUp.incrementAndGet();
              }
            },
            futures -> {
              // The release lands while the storm runs: after the threads saw the key given up.
              while (gaveUp.get() < threads && futures.stream().noneMatch(Future::isDone)) {
                Thread.onSpinWait();
              }
              assertThat(inbox.admin().release("payments", "p-2", ALICE))
                  .isEqualTo(ReleaseResult.RELEASED);
            });
    assertThat(outcomes).filteredOn(o -> o == ClaimOutcome.NEW).hasSize(1);
    assertThat(effects("p-2")).as("effects of the released key").isEqualTo(1);
  }

  @Test
  void thirty_two_leased_claimants_of_a_key_force_released_from_its_holder_record_one_effect()
      throws Exception {
    Inbox holder = inbox(s -> s.ownerId("stuck-worker"));
    Claim stuck = holder.leases().claim("charges", "ch-9", null);
    Inbox workers = inbox(s -> s.ownerId("worker"));
    int threads = 32;
    AtomicInteger waited = new AtomicInteger();
    AtomicInteger completed = new AtomicInteger();
    List<ClaimOutcome> outcomes =
        storm(
            threads,
            () -> {
              // Each thread retries until it owns the key or sees it done, as a client would.
              while (true) {
                Claim claim = workers.leases().claim("charges", "ch-9", null);
                if (claim.isNew()) {
                  workers.leases().complete(claim.leaseToken(), null);
                  completed.incrementAndGet();
                  return claim.outcome();
                }
                if (claim.outcome() == ClaimOutcome.DUPLICATE) {
                  return claim.outcome();
                }
                assertThat(claim.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
                waited.incrementAndGet();
              }
            },
            futures -> {
              while (waited.get() < threads && futures.stream().noneMatch(Future::isDone)) {
                Thread.onSpinWait();
              }
              assertThat(holder.admin().release("charges", "ch-9", ALICE.forced()))
                  .isEqualTo(ReleaseResult.RELEASED);
            });
    assertThat(outcomes).filteredOn(o -> o == ClaimOutcome.NEW).hasSize(1);
    assertThat(completed.get()).as("completions among 32 claimants").isEqualTo(1);
    assertThatThrownBy(() -> holder.leases().complete(stuck.leaseToken(), null))
        .as("the stuck holder's late complete")
        .isInstanceOf(LeaseLostException.class);
    assertThat(holder.admin().find("charges", "ch-9").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void a_late_lease_holder_is_fenced_off_by_a_forced_release() throws Exception {
    Inbox holder = inbox(s -> s.ownerId("worker-a"));
    Claim claim = holder.leases().claim("charges", "ch-1", null);
    assertThat(claim.isNew()).isTrue();
    InboxRecord before = holder.admin().find("charges", "ch-1").orElseThrow();

    assertThatThrownBy(() -> holder.admin().release("charges", "ch-1", ALICE))
        .isInstanceOf(LiveLeaseException.class)
        .hasMessageContaining("'ch-1'")
        .hasMessageContaining("worker-a")
        .hasMessageContaining("double effect")
        .hasMessageContaining("force");
    assertThat(holder.admin().find("charges", "ch-1").orElseThrow())
        .as("a refused release changes nothing")
        .usingRecursiveComparison()
        .isEqualTo(before);

    assertThat(holder.admin().release("charges", "ch-1", ALICE.forced()))
        .isEqualTo(ReleaseResult.RELEASED);
    assertThatThrownBy(() -> holder.leases().complete(claim.leaseToken(), RECONCILED))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("ch-1");
    assertThatThrownBy(() -> holder.leases().renew(claim.leaseToken()))
        .isInstanceOf(LeaseLostException.class);

    Claim next = inbox(s -> s.ownerId("worker-b")).leases().claim("charges", "ch-1", null);
    assertThat(next.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(next.leaseToken().fencingToken()).isGreaterThan(claim.leaseToken().fencingToken());
  }

  @Test
  void a_settled_lease_replays_the_operators_result_and_fences_off_its_holder() throws Exception {
    Inbox inbox = inbox(s -> s.ownerId("worker-a"));
    Claim claim = inbox.leases().claim("charges", "ch-2", null);
    assertThatThrownBy(() -> inbox.admin().settle("charges", "ch-2", RECONCILED, ALICE))
        .isInstanceOf(LiveLeaseException.class)
        .hasMessageContaining("contradict");

    assertThat(inbox.admin().settle("charges", "ch-2", RECONCILED, ALICE.forced()))
        .isEqualTo(SettleResult.SETTLED);
    assertThatThrownBy(() -> inbox.leases().complete(claim.leaseToken(), null))
        .isInstanceOf(LeaseLostException.class);
    Claim duplicate = inbox.leases().claim("charges", "ch-2", null);
    assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(duplicate.storedResult()).isEqualTo(RECONCILED);
  }

  @Test
  void an_expired_lease_is_settled_without_force() throws Exception {
    Inbox inbox = inbox();
    Claim claim = inbox.leases().claim("charges", "ch-3", null);
    timePasses(Duration.ofMinutes(5));
    assertThat(inbox.admin().settle("charges", "ch-3", RECONCILED, ALICE))
        .isEqualTo(SettleResult.SETTLED);
    assertThatThrownBy(() -> inbox.leases().complete(claim.leaseToken(), null))
        .isInstanceOf(LeaseLostException.class);
  }

  @Test
  void a_settled_key_is_a_duplicate_for_execute_and_execute_batch() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    executeFailing(inbox, "payments", "p-3", null);
    assertThat(inbox.admin().settle("payments", "p-3", RECONCILED, ALICE))
        .isEqualTo(SettleResult.SETTLED);
    assertThat(inbox.admin().settle("payments", "p-never-seen", null, ALICE))
        .as("a key without a record is settled by inserting it")
        .isEqualTo(SettleResult.SETTLED);

    Execution execution = executeWithEffect(inbox, "payments", "p-3");
    assertThat(execution.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(execution.storedResult()).contains(RECONCILED);
    assertThat(deliverWithEffect(inbox, "payments", "p-3", null)).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(deliverWithEffect(inbox, "payments", "p-never-seen", null))
        .isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects()).as("no handler ran for a settled key").isZero();

    assertThat(inbox.admin().settle("payments", "p-3", RECONCILED, ALICE))
        .as("a completed key keeps its result")
        .isEqualTo(SettleResult.NOT_SETTLEABLE);
    assertThat(inbox.admin().release("payments", "p-3", ALICE.forced()))
        .as("a completed key is never released, not even forced")
        .isEqualTo(ReleaseResult.NOT_RELEASABLE);
  }

  @Test
  void every_change_is_audited_with_who_why_when_and_the_record_before_and_after()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    executeFailing(inbox, "payments", "p-4", null);
    Instant dbBefore = databaseNow();
    inbox.admin().release("payments", "p-4", ALICE);
    inbox.admin().settle("payments", "p-4", RECONCILED, AdminAction.of("bob", "provider: paid"));
    assertThat(inbox.admin().release("payments", "p-4", ALICE))
        .isEqualTo(ReleaseResult.NOT_RELEASABLE);
    Instant dbAfter = databaseNow();

    KeyReport report = inbox.admin().show("payments", "p-4");
    assertThat(report.record().state()).isEqualTo(RecordState.COMPLETED);
    assertThat(report.history()).as("only changes are audited").hasSize(2);
    AuditEntry release = report.history().get(0);
    assertThat(release.action()).isEqualTo("RELEASE");
    assertThat(release.actor()).isEqualTo("alice");
    assertThat(release.reason()).isEqualTo("INC-7: provider timed out");
    assertThat(release.forced()).isFalse();
    assertThat(release.at()).isBetween(dbBefore, dbAfter);
    assertThat(release.before()).contains("\"state\": \"FAILED\"", "\"attempts\": 1");
    assertThat(release.after()).contains("\"state\": \"FAILED\"", "\"attempts\": 0");
    AuditEntry settle = report.history().get(1);
    assertThat(settle.action()).isEqualTo("SETTLE");
    assertThat(settle.actor()).isEqualTo("bob");
    assertThat(settle.after()).contains("\"state\": \"COMPLETED\"", "\"result_status\": 201");
    assertThat(settle.after()).as("the body is left out of the audit").doesNotContain("pay_1");
  }

  @Test
  void the_legacy_release_is_audited_as_this_node_and_refuses_a_live_lease_quietly()
      throws Exception {
    Inbox inbox = inbox(s -> s.ownerId("node-7").maxAttempts(1));
    executeFailing(inbox, "payments", "p-5", null);
    assertThat(inbox.admin().release("payments", "p-5")).isEqualTo(ReleaseResult.RELEASED);
    assertThat(inbox.admin().show("payments", "p-5").history())
        .singleElement()
        .satisfies(e -> assertThat(e.actor()).isEqualTo("node-7"));
    inbox.leases().claim("payments", "p-6", null);
    assertThat(inbox.admin().release("payments", "p-6")).isEqualTo(ReleaseResult.NOT_RELEASABLE);
  }

  @Test
  void stats_count_per_scope_and_state_and_show_the_last_purge() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1).retention(Duration.ofHours(1)));
    executeWithEffect(inbox, "a", "k-1");
    executeWithEffect(inbox, "a", "k-2");
    executeFailing(inbox, "b", "k-3", null);
    inbox.leases().claim("b", "k-4", null);
    InboxStats before = inbox.admin().stats();
    assertThat(before.counts())
        .containsExactly(
            new InboxStats.Count("a", RecordState.COMPLETED, 2, 0, 0),
            new InboxStats.Count("b", RecordState.FAILED, 1, 0, 1),
            new InboxStats.Count("b", RecordState.IN_PROGRESS, 1, 0, 0));
    assertThat(before.oldestLease()).isNotNull();
    assertThat(before.tableBytes()).isPositive();
    assertThat(before.lastPurgeAt()).isNull();

    timePasses(Duration.ofHours(2));
    assertThat(inbox.admin().countExpired()).isEqualTo(2);
    assertThat(inbox.admin().purgeExpired()).isEqualTo(2);
    InboxStats after = inbox.admin().stats();
    assertThat(after.lastPurgeDeleted()).isEqualTo(2);
    assertThat(after.lastPurgeAt()).isBeforeOrEqualTo(after.databaseNow());
    assertThat(after.counts())
        .contains(new InboxStats.Count("b", RecordState.IN_PROGRESS, 1, 1, 1));
  }

  @Test
  void list_pages_through_the_records_a_filter_matches() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    for (int i = 0; i < 5; i++) {
      executeWithEffect(inbox, "a", "k-" + i);
    }
    executeFailing(inbox, "a", "f-1", null);
    executeFailing(inbox, "a", "f-1", null);
    executeFailing(inbox, "b", "f-2", null);

    List<String> keys = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      KeyPage page = inbox.admin().list(KeyFilter.all().scope("a"), cursor, 2);
      page.records().forEach(r -> keys.add(r.key()));
      cursor = page.next();
      pages++;
    } while (cursor != null);
    assertThat(keys).containsExactly("f-1", "k-0", "k-1", "k-2", "k-3", "k-4");
    assertThat(pages).isEqualTo(3);

    assertThat(inbox.admin().list(KeyFilter.all().state(RecordState.FAILED), null, 10).records())
        .extracting(InboxRecord::key)
        .containsExactly("f-1", "f-2");
    assertThat(inbox.admin().list(KeyFilter.all().minAttempts(2), null, 10).records())
        .extracting(InboxRecord::key)
        .containsExactly("f-1");
    assertThat(
            inbox
                .admin()
                .list(KeyFilter.all().olderThan(Duration.ofMinutes(1)), null, 10)
                .records())
        .isEmpty();
    assertThatThrownBy(() -> inbox.admin().list(KeyFilter.all(), "not-a-cursor", 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not-a-cursor");
  }

  @Test
  void a_release_waits_for_a_claimant_holding_the_key_at_most_lock_timeout_and_changes_nothing()
      throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(300)));
    executeFailing(inbox, "payments", "p-7", null);
    try (Connection claimant = dataSource.getConnection()) {
      claimant.setAutoCommit(false);
      queryLong(
          claimant,
          "SELECT count(*) FROM (SELECT 1 FROM "
              + schema
              + ".inbox WHERE key = 'p-7' FOR UPDATE) AS held");
      assertThatThrownBy(() -> inbox.admin().release("payments", "p-7", ALICE))
          .isInstanceOf(InboxDatabaseException.class)
          .hasMessageContaining("lockTimeout")
          .hasMessageContaining("nothing was changed");
      claimant.rollback();
    }
    assertThat(inbox.admin().find("payments", "p-7").orElseThrow().attempts()).isEqualTo(1);
    assertThat(inbox.admin().show("payments", "p-7").history()).isEmpty();
    assertThat(inbox.admin().release("payments", "p-7", ALICE)).isEqualTo(ReleaseResult.RELEASED);
  }

  @Test
  void keys_and_reasons_outside_ascii_survive_the_audit_and_the_list_cursor() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    List<String> keys = List.of("zahlung-ä-1", "zahlung-€-2", "платёж-3", "支払い-4");
    for (String key : keys) {
      executeFailing(inbox, "zahlungen", key, null);
    }
    String reason = "Ticket \"ÄÖÜ-7\": Anbieter sagt \\ bezahlt\n(zweite Zeile) 💶";
    assertThat(inbox.admin().release("zahlungen", "платёж-3", AdminAction.of("jürgen", reason)))
        .isEqualTo(ReleaseResult.RELEASED);
    AuditEntry entry = inbox.admin().show("zahlungen", "платёж-3").history().get(0);
    assertThat(entry.reason()).isEqualTo(reason);
    assertThat(entry.actor()).isEqualTo("jürgen");
    assertThat(entry.before()).contains("платёж-3");

    List<String> listed = new ArrayList<>();
    String cursor = null;
    do {
      KeyPage page = inbox.admin().list(KeyFilter.all().scope("zahlungen"), cursor, 1);
      page.records().forEach(r -> listed.add(r.key()));
      cursor = page.next();
    } while (cursor != null);
    assertThat(listed).containsExactlyInAnyOrderElementsOf(keys).doesNotHaveDuplicates();
  }

  @Test
  void bad_operator_input_is_refused_with_the_problem_named() {
    assertThatThrownBy(() -> AdminAction.of(" ", "why"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("actor");
    assertThatThrownBy(() -> AdminAction.of("alice", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reason");
    assertThatThrownBy(() -> AdminAction.of("alice", "x".repeat(4001)))
        .hasMessageContaining("4000");
    Inbox inbox = inbox();
    assertThatThrownBy(() -> inbox.admin().release("payments", "bad\nkey", ALICE))
        .isInstanceOf(InvalidKeyException.class);
  }

  private Instant databaseNow() throws Exception {
    try (Connection c = dataSource.getConnection();
        var s = c.createStatement();
        var rs = s.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
    }
  }

  /**
   * Runs the call on that many threads at once, and {@code meanwhile} on this thread while they
   * run; their outcomes.
   */
  private static List<ClaimOutcome> storm(
      int threads, Callable<ClaimOutcome> call, Consumer<List<Future<ClaimOutcome>>> meanwhile)
      throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<ClaimOutcome>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  return call.call();
                }));
      }
      start.countDown();
      meanwhile.accept(futures);
      List<ClaimOutcome> outcomes = new ArrayList<>();
      for (Future<ClaimOutcome> f : futures) {
        outcomes.add(f.get(120, TimeUnit.SECONDS));
      }
      return outcomes;
    } finally {
      pool.shutdownNow();
    }
  }
}
