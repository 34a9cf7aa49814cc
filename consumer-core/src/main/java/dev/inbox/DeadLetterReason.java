package dev.inbox;

import java.util.Locale;

/**
 * Why a message went to the dead letter, in the words of every adapter: its {@link #code()} is the
 * {@value DeadLetterHeaders#REASON} header of a Kafka and of a RabbitMQ dead letter alike.
 */
public enum DeadLetterReason {
  /** The key is missing or breaks a rule of {@link InboxKeys}, or the key extractor threw. */
  INVALID_KEY,
  /** The adapter could not deserialize the message's key or value. */
  UNDESERIALIZABLE,
  /** The key was used before with a different payload (its fingerprint differs). */
  MISMATCH,
  /** The handler failed {@code maxAttempts} times. */
  GAVE_UP,
  /** The handler threw {@link NonRetryableException}. */
  NON_RETRYABLE;

  /** The reason as sent in the header: the name in lower case, such as {@code gave_up}. */
  public String code() {
    return name().toLowerCase(Locale.ROOT);
  }
}
