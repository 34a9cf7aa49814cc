package dev.inbox.spi;

import dev.inbox.ClaimOutcome;
import java.time.Duration;

/**
 * Receives what the inbox does, for metrics and tracing. Every method is a no-op by default, and is
 * called on the thread that did the work, so it must be fast and must not throw.
 */
public interface InboxListener {
  /** A listener that ignores everything. */
  InboxListener NOOP = new InboxListener() {};

  /** {@code count} keys of one claim round ended with {@code outcome}. */
  default void claimed(String scope, ClaimOutcome outcome, int count) {}

  /** One claim round trip (single key or whole batch) took {@code latency}. */
  default void claimLatency(String scope, Duration latency) {}

  /** One handler call took {@code latency}. */
  default void handled(String scope, boolean succeeded, Duration latency) {}

  /** A batch of {@code size} items was processed. */
  default void batch(String scope, int size, Duration latency) {}

  /** {@code count} claims took over a lease that had expired. */
  default void leasesTakenOver(String scope, int count) {}

  /**
   * {@link dev.inbox.InboxAdmin#purgeExpired()} deleted {@code rows}; on the partitioned storage,
   * the rows of the partitions it dropped as PostgreSQL's statistics estimate them (its return).
   */
  default void purged(long rows, Duration latency) {}

  /** The oldest committed {@code IN_PROGRESS} record is {@code age} old ({@code ZERO}: none). */
  default void oldestInProgress(Duration age) {}
}
