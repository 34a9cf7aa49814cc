package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LeasedModeTest extends InboxTestSupport {

  @Test
  void thirty_two_threads_lease_one_key_and_exactly_one_gets_new() throws Exception {
    Inbox inbox = inbox();
    int threads = 32;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Claim>> futures = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      futures.add(
          pool.submit(
              () -> {
                start.await();
                return inbox.leases().claim("mail", "welcome-42", null);
              }));
    }
    start.countDown();
    List<Claim> claims = new ArrayList<>();
    for (Future<Claim> f : futures) {
      claims.add(f.get(60, TimeUnit.SECONDS));
    }
    pool.shutdown();

    List<Claim> owners = claims.stream().filter(Claim::isNew).toList();
    assertThat(owners).as("owners among 32 leased claims").hasSize(1);
    assertThat(claims)
        .filteredOn(c -> !c.isNew())
        .hasSize(31)
        .allSatisfy(c -> assertThat(c.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS));
    assertThat(claims)
        .filteredOn(c -> !c.isNew())
        .allSatisfy(c -> assertThat(c.lockedUntil()).isNotNull());

    inbox
        .leases()
        .complete(
            owners.get(0).leaseToken(),
            StoredResult.of(250, "sent".getBytes(StandardCharsets.UTF_8)));
    Claim after = inbox.leases().claim("mail", "welcome-42", null);
    assertThat(after.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(after.storedResult().status()).isEqualTo(250);
  }

  @Test
  void an_expired_lease_is_taken_over_and_the_old_owner_can_no_longer_complete() throws Exception {
    Inbox ownerA = inbox(s -> s.ownerId("owner-a"));
    Inbox ownerB = inbox(s -> s.ownerId("owner-b"));
    Claim a = ownerA.leases().claim("charges", "ch-1", null);
    assertThat(a.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(ownerB.leases().claim("charges", "ch-1", null).outcome())
        .isEqualTo(ClaimOutcome.IN_PROGRESS);

    timePasses(Duration.ofSeconds(31));
    Claim b = ownerB.leases().claim("charges", "ch-1", null);
    assertThat(b.outcome()).as("B takes the expired lease over").isEqualTo(ClaimOutcome.NEW);
    assertThat(b.leaseToken().fencingToken()).isGreaterThan(a.leaseToken().fencingToken());

    assertThatThrownBy(() -> ownerA.leases().complete(a.leaseToken(), null))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("ch-1")
        .hasMessageContaining("owner-b");
    assertThatThrownBy(() -> ownerA.leases().renew(a.leaseToken()))
        .isInstanceOf(LeaseLostException.class);
    assertThatThrownBy(() -> ownerA.leases().fail(a.leaseToken(), "late"))
        .isInstanceOf(LeaseLostException.class);

    ownerB.leases().complete(b.leaseToken(), StoredResult.of(200, new byte[0]));
    InboxRecord record = ownerB.admin().find("charges", "ch-1").orElseThrow();
    assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(record.attempts()).isEqualTo(2);
    assertThat(record.lastError()).contains("lease expired").contains("owner-a");
    assertThatThrownBy(() -> ownerB.leases().complete(b.leaseToken(), null))
        .as("never completed twice")
        .isInstanceOf(IllegalStateTransitionException.class)
        .hasMessageContaining("COMPLETED");
  }

  @Test
  void renew_extends_a_lease_so_that_nobody_takes_it_over() throws Exception {
    Inbox ownerA = inbox(s -> s.ownerId("owner-a"));
    Inbox ownerB = inbox(s -> s.ownerId("owner-b"));
    Claim a = ownerA.leases().claim("s", "k", null);
    timePasses(Duration.ofSeconds(20));
    LeaseToken renewed = ownerA.leases().renew(a.leaseToken());
    timePasses(Duration.ofSeconds(20));
    assertThat(ownerB.leases().claim("s", "k", null).outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
    ownerA.leases().complete(renewed, null);
    assertThat(ownerB.leases().claim("s", "k", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
  }

  @Test
  void a_failed_lease_can_be_claimed_again_until_max_attempts() {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    Claim first = inbox.leases().claim("s", "k", null);
    inbox.leases().fail(first.leaseToken(), "provider timeout");
    Claim second = inbox.leases().claim("s", "k", null);
    assertThat(second.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(second.attempts()).isEqualTo(2);
    inbox.leases().fail(second.leaseToken(), "provider timeout again");
    assertThat(inbox.leases().claim("s", "k", null).outcome()).isEqualTo(ClaimOutcome.GAVE_UP);
  }

  @Test
  void a_transactional_claim_takes_over_an_expired_lease() throws Exception {
    Inbox inbox = inbox();
    Claim leased = inbox.leases().claim("s", "k", null);
    timePasses(Duration.ofMinutes(1));
    Execution tx =
        inbox.execute(
            "s",
            "k",
            c -> {
              effect(c, "s", "k", 1);
              return null;
            });
    assertThat(tx.executed()).isTrue();
    assertThatThrownBy(() -> inbox.leases().complete(leased.leaseToken(), null))
        .isInstanceOf(LeaseLostException.class);
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void lease_writes_commit_on_a_pool_that_hands_out_connections_with_auto_commit_off()
      throws Exception {
    try (HikariDataSource manualCommit = TestDataSources.pool(4, false)) {
      Inbox inbox =
          Inbox.builder()
              .dataSource(manualCommit)
              .settings(settings().build())
              .migrate(true)
              .build();
      try {
        Claim done = inbox.leases().claim("mail", "done", null);
        inbox.leases().complete(done.leaseToken(), StoredResult.of(250, new byte[0]));
        assertThat(inbox.admin().find("mail", "done").orElseThrow().state())
            .isEqualTo(RecordState.COMPLETED);

        Claim renewed = inbox.leases().claim("mail", "renewed", null);
        timePasses(Duration.ofSeconds(10));
        LeaseToken longer = inbox.leases().renew(renewed.leaseToken());
        assertThat(inbox.admin().find("mail", "renewed").orElseThrow().lockedUntil())
            .isEqualTo(longer.lockedUntil());

        Claim failed = inbox.leases().claim("mail", "failed", null);
        inbox.leases().fail(failed.leaseToken(), "smtp server said no");
        InboxRecord failedRecord = inbox.admin().find("mail", "failed").orElseThrow();
        assertThat(failedRecord.state()).isEqualTo(RecordState.FAILED);
        assertThat(failedRecord.attempts()).isEqualTo(1);

        assertThat(inbox.admin().release("mail", "failed")).isEqualTo(ReleaseResult.RELEASED);
        assertThat(inbox.admin().find("mail", "failed").orElseThrow().attempts()).isZero();
      } finally {
        inbox.close();
      }
    }
  }

  @Test
  void a_key_whose_leases_keep_expiring_gives_up_after_max_attempts_and_can_be_released()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    assertThat(inbox.leases().claim("mail", "crashes-its-worker", null).outcome())
        .isEqualTo(ClaimOutcome.NEW);
    timePasses(Duration.ofSeconds(31)); // the worker died: its lease expires
    Claim second = inbox.leases().claim("mail", "crashes-its-worker", null);
    assertThat(second.outcome()).as("the first expiry is taken over").isEqualTo(ClaimOutcome.NEW);
    assertThat(second.attempts()).isEqualTo(2);
    timePasses(Duration.ofSeconds(31));

    Claim third = inbox.leases().claim("mail", "crashes-its-worker", null);
    assertThat(third.outcome())
        .as("two expired leases are two attempts, which is maxAttempts")
        .isEqualTo(ClaimOutcome.GAVE_UP);
    assertThat(inbox.admin().lookup("mail", "crashes-its-worker", null).map(Claim::outcome))
        .contains(ClaimOutcome.GAVE_UP);
    InboxRecord stuck = inbox.admin().find("mail", "crashes-its-worker").orElseThrow();
    assertThat(stuck.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(stuck.attempts()).isEqualTo(2);

    assertThat(inbox.admin().release("mail", "crashes-its-worker"))
        .isEqualTo(ReleaseResult.RELEASED);
    Claim afterRelease = inbox.leases().claim("mail", "crashes-its-worker", null);
    assertThat(afterRelease.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(afterRelease.attempts()).isEqualTo(1);
  }

  @Test
  void a_live_lease_cannot_be_released() {
    Inbox inbox = inbox();
    assertThat(inbox.leases().claim("mail", "running", null).isNew()).isTrue();
    assertThat(inbox.admin().release("mail", "running")).isEqualTo(ReleaseResult.NOT_RELEASABLE);
    assertThat(inbox.leases().claim("mail", "running", null).outcome())
        .isEqualTo(ClaimOutcome.IN_PROGRESS);
  }
}
