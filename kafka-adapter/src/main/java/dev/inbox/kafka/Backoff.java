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
    Duration pause;
    try {
      // In nanoseconds, so that a zero or sub-millisecond initial pause stays what it is.
      pause = Duration.ofNanos(Math.multiplyExact(initial.toNanos(), 1L << doublings));
    } catch (ArithmeticException overflow) {
      return max;
    }
    return pause.compareTo(max) > 0 ? max : pause;
  }
}
