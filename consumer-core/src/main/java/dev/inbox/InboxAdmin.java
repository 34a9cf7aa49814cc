package dev.inbox;

import java.util.Optional;

/** Operations on single keys and on retention, for operators and read-only checks. */
public interface InboxAdmin {

  /** The record of a key. */
  Optional<InboxRecord> find(String scope, String key);

  /**
   * What a claim of the key would answer, when the key is settled already: {@code DUPLICATE} (with
   * its stored result), {@code MISMATCH}, {@code GAVE_UP}, or {@code IN_PROGRESS} under a live
   * lease. Empty when a claim could be {@code NEW} (or would wait on a transaction in flight).
   *
   * <p>It only reads: no lock, no write, one round trip on a connection of its own. A settled key
   * never becomes claimable again except through {@link #release} or {@link #purgeExpired}.
   *
   * @param fingerprint of the request, checked against the stored one; null skips the check
   */
  Optional<Claim> lookup(String scope, String key, byte[] fingerprint);

  /**
   * Frees a {@code FAILED} (or given-up) key for reprocessing, such as replaying a dead letter, and
   * likewise a key whose lease expired (one that gave up after its leases expired {@code
   * maxAttempts} times stays {@code IN_PROGRESS} with an expired lease).
   */
  ReleaseResult release(String scope, String key);

  /**
   * Deletes {@code COMPLETED} records older than {@code retention} by the database's clock, in
   * statements of at most {@code purgeBatchSize} rows that skip locked rows, so that claims never
   * wait on it. Never touches {@code FAILED} records or leases; an {@code IN_PROGRESS} record
   * without a lease (a claim committed without {@code complete}) counts as completed when it was
   * last written.
   *
   * @return the number of rows deleted
   */
  long purgeExpired();
}
