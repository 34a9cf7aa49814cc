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
   * An earlier item failed under {@link BatchFailurePolicy#STOP}; nothing was written. Retry it.
   */
  NOT_ATTEMPTED;

  /** True when the message may be acknowledged: its effect is committed, or it never needs one. */
  public boolean isSettled() {
    return this == COMPLETED || this == DUPLICATE;
  }
}
