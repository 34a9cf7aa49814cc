package dev.inbox;

/** What happened to one item of a batch. */
public enum ItemStatus {
  /** New: the handler ran and its writes committed with the batch. Acknowledge it. */
  COMPLETED,
  /** Completed earlier, or repeated inside this batch. Acknowledge it; nothing ran. */
  DUPLICATE,
  /** Another owner holds a live claim. Retry it later. */
  IN_PROGRESS,
  /** The key was used with a different fingerprint. Dead-letter it. */
  MISMATCH,
  /** The key failed {@code maxAttempts} times. Dead-letter it. */
  GAVE_UP,
  /** The handler threw; its writes were rolled back and the attempt was counted. Retry it. */
  FAILED,
  /**
   * Not run, and nothing was written for it: an earlier item failed under {@link
   * BatchFailurePolicy#STOP}, or an earlier item of the batch with the same key and another payload
   * was a mismatch while this one may still run. No attempt was counted. Retry it.
   */
  NOT_ATTEMPTED;

  /** True when the message may be acknowledged: its effect is committed, or it never needs one. */
  public boolean isSettled() {
    return this == COMPLETED || this == DUPLICATE;
  }
}
