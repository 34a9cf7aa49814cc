package dev.inbox.examples;

import dev.inbox.InboxDataSources;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/** Flag checks that name the flag and the bad value. */
final class Validate {
  private Validate() {}

  static void jdbcUrl(CommandSpec spec, String flag, String value) {
    if (value != null && !(value.startsWith("jdbc:postgresql://") && PostgresUrls.isValid(value))) {
      fail(
          spec,
          flag
              + " must be a PostgreSQL JDBC URL like jdbc:postgresql://127.0.0.1:5432/db, but was '"
              + InboxDataSources.maskPasswords(value)
              + "'");
    }
  }

  static void port(CommandSpec spec, String flag, int value) {
    if (value < 0 || value > 65_535) {
      fail(spec, flag + " must be a TCP port between 0 and 65535, but was " + value);
    }
  }

  static void positive(CommandSpec spec, String flag, long value) {
    if (value <= 0) {
      fail(spec, flag + " must be positive, but was " + value);
    }
  }

  static void notNegative(CommandSpec spec, String flag, long value) {
    if (value < 0) {
      fail(spec, flag + " must not be negative, but was " + value);
    }
  }

  static void rate(CommandSpec spec, String flag, double value) {
    if (!(value >= 0 && value < 1)) {
      fail(spec, flag + " must be at least 0 and below 1, but was " + value);
    }
  }

  static void oneOf(CommandSpec spec, String flag, String value, String... allowed) {
    if (!java.util.List.of(allowed).contains(value)) {
      fail(
          spec,
          flag + " must be one of " + String.join(", ", allowed) + ", but was '" + value + "'");
    }
  }

  static void hostPorts(CommandSpec spec, String flag, String value) {
    if (value != null && !value.matches("[^,:\\s]+:\\d{1,5}(,[^,:\\s]+:\\d{1,5})*")) {
      fail(spec, flag + " must be HOST:PORT[,HOST:PORT...], but was '" + value + "'");
    }
  }

  static void amqpUri(CommandSpec spec, String flag, String value) {
    if (value != null && !(value.matches("amqps?://.+") && Amqp.isValid(value))) {
      fail(
          spec,
          flag
              + " must be an AMQP URI like amqp://user:password@127.0.0.1:5672, but was '"
              + InboxDataSources.maskPasswords(value)
              + "'");
    }
  }

  static void name(CommandSpec spec, String flag, String value) {
    if (value == null || !value.matches("[A-Za-z0-9._-]{1,200}")) {
      fail(
          spec,
          flag + " must be 1 to 200 letters, digits, '.', '_' or '-', but was '" + value + "'");
    }
  }

  static void fail(CommandSpec spec, String message) {
    throw new CommandLine.ParameterException(
        spec.commandLine(), InboxDataSources.maskPasswords(message));
  }
}
