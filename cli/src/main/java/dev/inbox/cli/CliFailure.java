package dev.inbox.cli;

/** A failure whose message already says what went wrong and what to do; printed as it is. */
final class CliFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  CliFailure(String message, Throwable cause) {
    super(message, cause);
  }
}
