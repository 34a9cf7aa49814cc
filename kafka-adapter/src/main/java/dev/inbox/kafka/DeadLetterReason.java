package dev.inbox.kafka;

/** Why a record went to the dead-letter topic; sent as the {@code inbox-dlt-reason} header. */
public enum DeadLetterReason {
  /** The key extractor threw, or the key broke a rule of {@link dev.inbox.InboxKeys}. */
  INVALID_KEY,
  /** The adapter could not deserialize the record's key or value. */
  UNDESERIALIZABLE,
  /** The key was used before with a different fingerprint. */
  MISMATCH,
  /** The handler failed {@code maxAttempts} times. */
  GAVE_UP,
  /** The handler threw {@link NonRetryableException}. */
  NON_RETRYABLE
}
