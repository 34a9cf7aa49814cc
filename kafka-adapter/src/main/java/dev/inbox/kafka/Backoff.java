package dev.inbox.kafka;

import java.time.Duration;

/**
 * How long a partition pauses after its record failed: doubling from {@code initial} with each
 * attempt, up to {@code max}.
 */
record Backoff(Duration initial, Duration max) {
  static final Backoff DEFAULT = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10));

  Backoff {
    if (initial.isNegative() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException(
          "backoff must satisfy 0 <= initial <= max, got initial=" + initial + " max=" + max);
    }
  }

  Duration after(int attempts) {
    int doublings = Math.max(0, Math.min(attempts - 1, 30));
    long millis = initial.toMillis() << doublings;
    return millis <= 0 || millis > max.toMillis() ? max : Duration.ofMillis(millis);
  }
}
