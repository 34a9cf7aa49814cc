package dev.inbox;

/** What a claim of a (scope, key) found, and so what the caller must do next. */
public enum ClaimOutcome {
  /** The caller owns the key: run the handler. */
  NEW,
  /** The key was already completed: do nothing, and answer with the stored result if any. */
  DUPLICATE,
  /** Another owner holds a live claim on the key: try again later. */
  IN_PROGRESS,
  /** The key was used with a different request fingerprint: refuse the request. */
  MISMATCH,
  /** The key failed {@code maxAttempts} times: route the message to a dead letter. */
  GAVE_UP
}
