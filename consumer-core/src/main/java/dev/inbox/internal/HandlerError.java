package dev.inbox.internal;

/**
 * Carries an {@link Error} thrown by an adapter's handler through the inbox as an exception, so
 * that the inbox counts it as a failed attempt (rolled back, retried, dead-lettered after {@code
 * maxAttempts}) instead of letting it end the adapter's loop. {@link dev.inbox.Disposition} unwraps
 * it, so that a dead letter names the handler's own {@link Error}.
 */
public final class HandlerError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public HandlerError(Error error) {
    super("the handler threw " + error, error);
  }

  /** The handler's own throwable: the {@link Error} this carries, or the failure as given. */
  public static Throwable unwrap(Throwable failure) {
    return failure instanceof HandlerError ? failure.getCause() : failure;
  }
}
