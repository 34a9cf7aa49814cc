package dev.inbox.cli;

import dev.inbox.InboxDataSources;
import dev.inbox.InboxException;
import dev.inbox.InvalidKeyException;
import dev.inbox.LiveLeaseException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * How a failure reaches the operator: one line on stderr, {@code inbox <command>: what failed and
 * what to do}, exit code 1 (2 for bad usage with the usage text, 3 for a refusal). The stack trace
 * follows only with {@code --verbose}. Passwords in a URL are masked in everything printed.
 */
final class CliErrors {
  /** undefined_table: the table, or the audit table of migration V2, is missing. */
  private static final String UNDEFINED_TABLE = "42P01";

  private CliErrors() {}

  static void install(CommandLine cli) {
    cli.setExecutionExceptionHandler(CliErrors::failed);
    cli.setParameterExceptionHandler(CliErrors::badParameter);
  }

  private static int failed(Exception e, CommandLine command, CommandLine.ParseResult parseResult) {
    PrintWriter err = command.getErr();
    err.println("inbox " + command.getCommandName() + ": " + describe(e));
    if (verbose(parseResult)) {
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      err.print(InboxDataSources.maskPasswords(trace.toString()));
    }
    err.flush();
    if (e instanceof LiveLeaseException) {
      return InboxCli.EXIT_REFUSED;
    }
    if (e instanceof CliFailure failure) {
      return failure.exitCode();
    }
    return e instanceof IllegalArgumentException || e instanceof InvalidKeyException
        ? command.getCommandSpec().exitCodeOnInvalidInput()
        : 1;
  }

  private static boolean verbose(CommandLine.ParseResult parseResult) {
    for (CommandLine.ParseResult p = parseResult; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption("--verbose")) {
        return true;
      }
    }
    return false;
  }

  private static int badParameter(ParameterException e, String[] args) {
    CommandLine command = e.getCommandLine();
    PrintWriter err = command.getErr();
    err.println(InboxDataSources.maskPasswords(e.getMessage()));
    if (!UnmatchedArgumentException.printSuggestions(e, err)) {
      err.print(InboxDataSources.maskPasswords(command.getUsageMessage()));
    }
    err.flush();
    return command.getCommandSpec().exitCodeOnInvalidInput();
  }

  static String describe(Throwable e) {
    if (e instanceof LiveLeaseException) {
      return e.getMessage() + " Nothing was changed; --force takes it.";
    }
    if (e instanceof CliFailure
        || e instanceof IllegalArgumentException
        || e instanceof InvalidKeyException) {
      return InboxDataSources.maskPasswords(e.getMessage());
    }
    if (find(e, UnknownHostException.class) != null) {
      return "cannot reach the database: unknown host "
          + find(e, UnknownHostException.class).getMessage()
          + "; check --url";
    }
    if (find(e, ConnectException.class) != null) {
      return "cannot reach the database: connection refused; check that PostgreSQL runs at --url";
    }
    SQLException sql = find(e, SQLException.class);
    String state = sql == null || sql.getSQLState() == null ? "" : sql.getSQLState();
    String what = e instanceof InboxException ? e.getMessage() : e.toString();
    if (UNDEFINED_TABLE.equals(state)) {
      return what
          + ": "
          + oneLine(sql.getMessage())
          + "; check --schema and --table, and that the application ran the inbox's migrations"
          + " (V2 adds the audit table)";
    }
    if (state.startsWith("28")) {
      return "cannot log in to the database: "
          + oneLine(sql.getMessage())
          + "; check --user and --password (or INBOX_DB_PASSWORD)";
    }
    String cause =
        sql == null ? "" : ": " + oneLine(sql.getMessage()) + " (SQLState " + state + ")";
    return InboxDataSources.maskPasswords(
        what + cause + "; run it again with --verbose for the stack trace");
  }

  private static String oneLine(String text) {
    return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  private static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }
}
