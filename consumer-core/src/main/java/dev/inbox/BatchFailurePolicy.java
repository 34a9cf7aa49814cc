package dev.inbox;

/** What a batch does with the items after one whose handler threw. */
public enum BatchFailurePolicy {
  /** Run every new item; one failure does not undo the others. For queues without ordering. */
  CONTINUE,
  /**
   * Commit the items before the failure, count the failure, and leave the later items untouched
   * ({@link ItemStatus#NOT_ATTEMPTED}), so that a partition's order is kept.
   */
  STOP
}
