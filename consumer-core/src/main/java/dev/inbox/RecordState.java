package dev.inbox;

/**
 * The state of one inbox record, as stored in the {@code state} column.
 *
 * <p>In transactional mode {@link #IN_PROGRESS} exists only inside the claiming transaction: other
 * transactions see either no row or the final state. In leased mode {@link #IN_PROGRESS} is
 * committed together with a lease that expires.
 */
public enum RecordState {
  /** A claimant owns the key and is running its handler. */
  IN_PROGRESS,
  /** The handler's effects are committed; a claim of the same key is a duplicate. */
  COMPLETED,
  /** The handler failed; the key may be claimed again until {@code maxAttempts} is reached. */
  FAILED
}
