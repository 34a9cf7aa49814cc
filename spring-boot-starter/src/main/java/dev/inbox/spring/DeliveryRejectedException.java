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
  private final int attempts;

  public DeliveryRejectedException(
      DeadLetterReason reason, String scope, String key, String message) {
    this(reason, scope, key, 0, message);
  }

  /**
   * @param attempts the attempts the inbox counted for the key (0 for a message without one)
   */
  public DeliveryRejectedException(
      DeadLetterReason reason, String scope, String key, int attempts, String message) {
    super(message);
    this.reason = reason;
    this.scope = scope;
    this.key = key;
    this.attempts = attempts;
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

  /** The attempts the inbox counted for the key: {@code x-inbox-attempts} of the dead letter. */
  public int attempts() {
    return attempts;
  }
}
