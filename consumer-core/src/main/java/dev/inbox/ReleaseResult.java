package dev.inbox;

/** What {@link InboxAdmin#release} did. */
public enum ReleaseResult {
  /** The key was {@code FAILED} (or gave up); its attempts were reset and the next claim is NEW. */
  RELEASED,
  /** There is no record for the key; the next claim is NEW anyway. */
  NOT_FOUND,
  /** The key is {@code COMPLETED} or {@code IN_PROGRESS}; nothing was changed. */
  NOT_RELEASABLE
}
