package dev.inbox.http.spi;

import java.time.Duration;

/**
 * Receives what {@link dev.inbox.http.IdempotencyFilter} does, for metrics. Every method is a no-op
 * by default and is called on the request thread, so it must be fast and must not throw.
 */
public interface IdempotencyListener {
  /** A listener that ignores everything. */
  IdempotencyListener NOOP = new IdempotencyListener() {};

  /**
   * One request the filter applies to was answered.
   *
   * @param outcome how it was answered
   * @param addedLatency the time the filter itself took: parsing, buffering, claiming, waiting for
   *     a request in flight, committing and replaying, but not the application's handler
   */
  default void answered(RequestOutcome outcome, Duration addedLatency) {}
}
