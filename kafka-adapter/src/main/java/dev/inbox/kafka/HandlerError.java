package dev.inbox.kafka;

/**
 * Carries an {@link Error} thrown by a handler through the inbox as an exception, so that the inbox
 * counts it as a failed attempt (rolled back, retried, dead-lettered after {@code maxAttempts})
 * instead of letting it end the poll loop.
 */
final class HandlerError extends RuntimeException {
  HandlerError(Error error) {
    super("the handler threw " + error, error);
  }

  /** The handler's own throwable: the {@link Error} this carries, or the failure as given. */
  static Throwable unwrap(Throwable failure) {
    return failure instanceof HandlerError ? failure.getCause() : failure;
  }
}
