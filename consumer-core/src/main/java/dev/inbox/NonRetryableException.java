package dev.inbox;

/**
 * Thrown by a handler for a message that no retry can fix (a payload that breaks a business rule,
 * an account that is closed): the adapter sends the message to the dead letter at once, with reason
 * {@link DeadLetterReason#NON_RETRYABLE}, instead of retrying it up to {@code maxAttempts}. The
 * handler's writes are rolled back and the attempt is counted like any other failure.
 *
 * <p>It is never a {@linkplain TransientFailures transient} failure, whatever its cause: a handler
 * that wraps a deadlock in it says that running it again cannot help. It extends {@link
 * RuntimeException} rather than {@link InboxException} because the handler throws it, not the
 * inbox.
 */
public class NonRetryableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public NonRetryableException(String message) {
    super(message);
  }

  public NonRetryableException(String message, Throwable cause) {
    super(message, cause);
  }
}
