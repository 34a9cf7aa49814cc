package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.inbox.testing.MutableClock;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Nodes whose clocks disagree share one table. Who owns a lease and what may be purged is decided
 * by the database's clock, so a node whose clock runs ahead or behind changes neither.
 */
class ClockSkewTest extends InboxTestSupport {
  private static final Duration SKEW = Duration.ofSeconds(45);

  @SuppressWarnings("deprecation") // the clock is what this test skews
  private Inbox node(String owner, Clock clock, Duration retention) {
    return inbox(s -> s.ownerId(owner).clock(clock).retention(retention));
  }

  private Inbox node(String owner, Clock clock) {
    return node(owner, clock, InboxSettings.DEFAULT_RETENTION);
  }

  private static Clock ahead() {
    return new MutableClock(Instant.now().plus(SKEW));
  }

  private static Clock behind() {
    return new MutableClock(Instant.now().minus(SKEW));
  }

  @Test
  void a_node_whose_clock_runs_45_s_ahead_never_takes_over_a_fresh_lease() throws Exception {
    Inbox honest = node("honest", Clock.systemUTC());
    Inbox fast = node("fast", ahead());
    Claim owned = honest.leases().claim("mail", "m-1", null);
    assertThat(owned.outcome()).isEqualTo(ClaimOutcome.NEW);

    assertThat(fast.leases().claim("mail", "m-1", null).outcome())
        .as("a leased claim on the fast node")
        .isEqualTo(ClaimOutcome.IN_PROGRESS);
    assertThat(fast.admin().lookup("mail", "m-1", null).map(Claim::outcome))
        .contains(ClaimOutcome.IN_PROGRESS);
    assertThat(executeWithEffect(fast, "mail", "m-1").outcome())
        .isEqualTo(ClaimOutcome.IN_PROGRESS);
    assertThat(deliverWithEffect(fast, "mail", "m-1", null)).isEqualTo(ItemStatus.IN_PROGRESS);
    assertThat(fast.admin().release("mail", "m-1")).isEqualTo(ReleaseResult.NOT_RELEASABLE);

    LeaseToken renewed = honest.leases().renew(owned.leaseToken());
    assertThatCode(() -> honest.leases().complete(renewed, null))
        .as("the honest owner still holds its lease")
        .doesNotThrowAnyException();
    assertThat(effects()).as("effects run by the fast node").isZero();
    InboxRecord record = honest.admin().find("mail", "m-1").orElseThrow();
    assertThat(record.attempts()).as("attempts: no takeover").isEqualTo(1);
    assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void a_lease_granted_by_a_node_whose_clock_runs_45_s_behind_lasts_its_full_duration() {
    Inbox slow = node("slow", behind());
    Inbox honest = node("honest", Clock.systemUTC());
    Claim owned = slow.leases().claim("mail", "m-2", null);
    assertThat(owned.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(honest.leases().claim("mail", "m-2", null).outcome())
        .as("a leased claim on the honest node")
        .isEqualTo(ClaimOutcome.IN_PROGRESS);

    LeaseToken renewed = slow.leases().renew(owned.leaseToken());
    assertThat(honest.leases().claim("mail", "m-2", null).outcome())
        .as("a leased claim on the honest node after the renewal")
        .isEqualTo(ClaimOutcome.IN_PROGRESS);
    assertThat(renewed.lockedUntil()).isAfter(Instant.now().plus(Duration.ofSeconds(5)));
    slow.leases().complete(renewed, null);
    assertThat(slow.admin().find("mail", "m-2").orElseThrow().attempts()).isEqualTo(1);
  }

  @Test
  void purge_on_a_node_whose_clock_runs_45_s_ahead_keeps_records_inside_the_retention()
      throws Exception {
    Inbox honest = node("honest", Clock.systemUTC());
    Inbox fast = node("fast", ahead(), Duration.ofSeconds(40));
    assertThat(honest.execute("pay", "p-1", tx -> null).executed()).isTrue();

    assertThat(fast.admin().purgeExpired()).as("rows purged by the fast node").isZero();
    assertThat(inboxRows()).isEqualTo(1);
    assertThat(honest.execute("pay", "p-1", tx -> null).outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
  }
}
