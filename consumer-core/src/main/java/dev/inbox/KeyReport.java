package dev.inbox;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One key as an operator sees it, from {@link InboxAdmin#show}: its record, if any, and every
 * operator's change of it.
 *
 * @param scope the scope
 * @param key the key
 * @param databaseNow the database's {@code now()} when it was read, to judge the lease by
 * @param record the record, or null when there is none (never claimed, rolled back, or purged)
 * @param history the audit entries of the key, oldest first
 */
public record KeyReport(
    String scope, String key, Instant databaseNow, InboxRecord record, List<AuditEntry> history) {

  public KeyReport {
    history = List.copyOf(history);
  }

  /** The record, or empty when there is none. */
  public Optional<InboxRecord> found() {
    return Optional.ofNullable(record);
  }

  /** Whether the key is under a lease that runs on at {@link #databaseNow}. */
  public boolean leaseLive() {
    return record != null
        && record.state() == RecordState.IN_PROGRESS
        && record.lockedUntil() != null
        && !record.lockedUntil().isBefore(databaseNow);
  }
}
