package dev.inbox;

/**
 * The handler threw. Its writes were rolled back, and the failure was counted, so that the key
 * reaches {@link ClaimOutcome#GAVE_UP} after {@code maxAttempts}. The handler's exception is the
 * cause.
 */
public final class HandlerFailedException extends InboxException {
  private static final long serialVersionUID = 1L;
  private final int attempts;

  public HandlerFailedException(String scope, String key, int attempts, Throwable cause) {
    super(
        scope,
        key,
        "handler failed for key '"
            + key
            + "' in scope '"
            + scope
            + "' on attempt "
            + attempts
            + "; its writes were rolled back: "
            + cause,
        cause);
    this.attempts = attempts;
  }

  /** The attempts counted for this key, this one included. */
  public int attempts() {
    return attempts;
  }
}
