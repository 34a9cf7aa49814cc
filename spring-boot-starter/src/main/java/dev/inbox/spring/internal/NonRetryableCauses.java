package dev.inbox.spring.internal;

import dev.inbox.NonRetryableException;

/**
 * Whether a listener's failure is a {@link NonRetryableException} (the listener's own, or a key
 * that gave up or mismatches): Spring AMQP hands a retry policy the listener's exception wrapped in
 * a {@code ListenerExecutionFailedException}, so the whole cause chain is searched.
 */
public final class NonRetryableCauses {
  private NonRetryableCauses() {}

  public static boolean in(Throwable failure) {
    // Bounded, since a cause chain can be made to loop.
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
      if (cause instanceof NonRetryableException) {
        return true;
      }
    }
    return false;
  }
}
