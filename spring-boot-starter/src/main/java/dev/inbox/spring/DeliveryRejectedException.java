package dev.inbox.spring;

import dev.inbox.DeadLetterReason;
import dev.inbox.NonRetryableException;

/**
 * The inbox refuses a message that no retry can fix: its key gave up after {@code maxAttempts}
 * failed attempts, it was used before with a different payload, or it has no valid key. Thrown from
 * the listener method, it is a {@link NonRetryableException}: the starter registers it as not
 * retryable with Spring Kafka's {@code DefaultErrorHandler}, which hands the message to its
 * recoverer (a {@code DeadLetterPublishingRecoverer}, say) at once.
 */
public class DeliveryRejectedException extends NonRetryableException {
  private static final long serialVersionUID = 1L;

  private final DeadLetterReason reason;
  private final String scope;
  private final String key;

  public DeliveryRejectedException(
      DeadLetterReason reason, String scope, String key, String message) {
    super(message);
    this.reason = reason;
    this.scope = scope;
    this.key = key;
  }

  /** Why: {@code GAVE_UP}, {@code MISMATCH} or {@code INVALID_KEY}. */
  public DeadLetterReason reason() {
    return reason;
  }

  public String scope() {
    return scope;
  }

  /** The key, or null when the message has no valid key. */
  public String key() {
    return key;
  }
}
