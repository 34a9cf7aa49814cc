package dev.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The health rules on a hand-driven monotonic clock: no real time passes in these tests. */
class InboxHealthTest {
  private final AtomicLong now = new AtomicLong(1_000);
  private final InboxHealth health =
      new InboxHealth(Duration.ofSeconds(10), Duration.ofMinutes(5), now::get);

  @Test
  void janitor_is_alive_until_three_intervals_pass_without_a_round() {
    assertThat(health.report().up()).isTrue();
    advance(Duration.ofSeconds(29));
    assertThat(health.report().up()).isTrue();
    advance(Duration.ofSeconds(1));
    InboxHealth.Report dead = health.report();
    assertThat(dead.up()).isFalse();
    assertThat((String) dead.details().get("janitor")).startsWith("no round finished for PT30S");

    health.oldestInProgress(Duration.ZERO);
    assertThat(health.report().up()).isTrue();
    assertThat(health.report().details()).containsEntry("janitor", "alive");
  }

  @Test
  void a_key_in_progress_past_the_threshold_is_down_and_named() {
    health.oldestInProgress(Duration.ofMinutes(4));
    assertThat(health.report().up()).isTrue();
    health.oldestInProgress(Duration.ofMinutes(5));
    InboxHealth.Report stuck = health.report();
    assertThat(stuck.up()).isFalse();
    assertThat(stuck.details()).containsEntry("oldestInProgress", "PT5M");
    assertThat((String) stuck.details().get("stuck")).contains("IN_PROGRESS for PT5M");
  }

  @Test
  void a_disabled_janitor_is_reported_and_not_down() {
    InboxHealth off = new InboxHealth(Duration.ZERO, Duration.ofMinutes(5), now::get);
    advance(Duration.ofDays(1));
    assertThat(off.report().up()).isTrue();
    assertThat((String) off.report().details().get("janitor")).startsWith("disabled");
  }

  @Test
  void a_threshold_that_is_not_positive_is_refused_with_its_value() {
    assertThatThrownBy(() -> new InboxHealth(Duration.ofSeconds(1), Duration.ZERO))
        .hasMessage("inbox.health.in-progress-threshold must be positive, but was PT0S");
  }

  private void advance(Duration duration) {
    now.addAndGet(duration.toNanos());
  }
}
