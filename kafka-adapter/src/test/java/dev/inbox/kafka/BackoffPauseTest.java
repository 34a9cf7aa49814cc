package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code retryBackoff(initial, max)}: "the pause after a failed attempt: doubling from initial up
 * to max", also from a zero or sub-millisecond initial pause (which once answered the maximum).
 */
class BackoffPauseTest {

  @Test
  void a_zero_initial_backoff_does_not_wait_the_maximum() {
    Backoff backoff = new Backoff(Duration.ZERO, Duration.ofSeconds(10));
    assertThat(backoff.after(1)).as("the pause after the first failed attempt").isZero();
  }

  @Test
  void a_sub_millisecond_initial_backoff_does_not_wait_the_maximum() {
    Backoff backoff = new Backoff(Duration.ofNanos(500_000), Duration.ofSeconds(10));
    assertThat(backoff.after(1))
        .as("the pause after the first failed attempt")
        .isLessThan(Duration.ofMillis(1));
  }
}
