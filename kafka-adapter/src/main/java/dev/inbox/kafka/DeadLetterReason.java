package dev.inbox.kafka;

import java.util.Locale;

/**
 * Why a record went to the dead-letter topic; its {@link #code()} is the {@code inbox-dlt-reason}
 * header.
 */
public enum DeadLetterReason {
  /** The key extractor threw, or the key broke a rule of {@link dev.inbox.InboxKeys}. */
  INVALID_KEY,
  /** The adapter could not deserialize the record's key or value. */
  UNDESERIALIZABLE,
  /** The key was used before with a different value (payload fingerprint). */
  MISMATCH,
  /** The handler failed {@code maxAttempts} times. */
  GAVE_UP,
  /** The handler threw {@link NonRetryableException}. */
  NON_RETRYABLE;

  /**
   * The reason as sent in the header: the name in lower case, such as {@code mismatch}; the
   * RabbitMQ adapter uses the same words.
   */
  public String code() {
    return name().toLowerCase(Locale.ROOT);
  }
}
