package dev.inbox;

import java.time.Instant;
import java.util.List;

/**
 * The inbox table at a glance, from {@link InboxAdmin#stats}: every time is the database's.
 *
 * @param databaseNow the database's {@code now()} when it was read
 * @param counts rows per scope and state
 * @param oldestLease when the oldest key under a lease (live or expired) was first claimed, or null
 * @param tableBytes the table's size on disk, with its indexes and TOAST
 * @param lastPurgeAt when a purge of expired records last ran, or null when none ran since the
 *     audit migration
 * @param lastPurgeDeleted how many rows that purge deleted, or null
 */
public record InboxStats(
    Instant databaseNow,
    List<Count> counts,
    Instant oldestLease,
    long tableBytes,
    Instant lastPurgeAt,
    Long lastPurgeDeleted) {

  public InboxStats {
    counts = List.copyOf(counts);
  }

  /**
   * The rows of one scope in one state.
   *
   * @param scope the scope
   * @param state the state
   * @param count how many rows
   * @param expiredLeases of those, how many are {@code IN_PROGRESS} under an expired lease
   * @param gaveUp of those, how many used up {@code maxAttempts} (failed, or expired leases)
   */
  public record Count(
      String scope, RecordState state, long count, long expiredLeases, long gaveUp) {}
}
