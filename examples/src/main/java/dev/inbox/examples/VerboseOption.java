package dev.inbox.examples;

import picocli.CommandLine.Option;

/** Every subcommand's {@code --verbose} flag; {@link CommandErrors} reads it. */
final class VerboseOption {
  static final String NAME = "--verbose";

  @Option(
      names = NAME,
      description =
          "On a failure, print the stack trace after the one-line message, and the PostgreSQL"
              + " driver's warnings (passwords are masked either way).")
  boolean verbose;
}
