package dev.inbox.cli;

/** A failure whose message already says what went wrong and what to do; printed as it is. */
final class CliFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;

  CliFailure(String message, Throwable cause) {
    this(message, cause, 1);
  }

  private CliFailure(String message, Throwable cause, int exitCode) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  /** Bad or missing input that no option check could catch: exit code 2, as for a bad flag. */
  static CliFailure usage(String message) {
    return new CliFailure(message, null, 2);
  }

  int exitCode() {
    return exitCode;
  }
}
