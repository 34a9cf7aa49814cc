package dev.inbox;

import java.time.Instant;

/**
 * The answer to {@link Inbox#reserveAtStart}: its claim, and what the completion needs to write the
 * key's record then. Complete or fail it through the methods that take a {@code Reservation}; those
 * that take its {@link #claim()} would find no record to complete while it is deferred.
 *
 * @param claim what the reservation found; on {@code NEW} this transaction holds the key
 * @param fingerprint the request's fingerprint, written with the record (null: none)
 * @param reservedAt when the key was reserved, written as the record's {@code created_at}
 * @param recordDeferred true when no record exists yet: the key is held by a transaction-level
 *     advisory lock, and the completion inserts the record; false when the key already had a record
 *     (a failed attempt, an expired lease), which this transaction claimed
 */
public record Reservation(
    Claim claim, byte[] fingerprint, Instant reservedAt, boolean recordDeferred) {

  public boolean isNew() {
    return claim.isNew();
  }

  public ClaimOutcome outcome() {
    return claim.outcome();
  }
}
