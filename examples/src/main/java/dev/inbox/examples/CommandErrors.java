package dev.inbox.examples;

import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.PossibleAuthenticationFailureException;
import dev.inbox.InboxDataSources;
import java.io.InterruptedIOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * How a failure reaches the person who ran a command: one line on stderr, {@code <command>: what
 * failed, where, and what to do}, and exit code 1 (2 for a bad flag, with the usage). The stack
 * trace follows only with {@code --verbose}. Whatever is printed goes through {@link
 * InboxDataSources#maskPasswords} first, so no password in a URL reaches the screen or a log.
 */
final class CommandErrors {
  /**
   * pgjdbc logs through java.util.logging, whose console handler writes to stderr: a URL with a bad
   * port gets a two-line warning before the refusal. Held here so that the level sticks (JUL keeps
   * loggers only weakly).
   */
  private static final Logger PGJDBC = Logger.getLogger("org.postgresql");

  private CommandErrors() {}

  static void install(CommandLine cli) {
    cli.setExecutionStrategy(CommandErrors::execute);
    cli.setExecutionExceptionHandler(CommandErrors::failed);
    cli.setParameterExceptionHandler(CommandErrors::badParameter);
  }

  private static int execute(ParseResult parseResult) {
    PGJDBC.setLevel(verbose(parseResult) ? null : Level.OFF);
    return new CommandLine.RunLast().execute(parseResult);
  }

  private static boolean verbose(ParseResult parseResult) {
    for (ParseResult command = parseResult; command != null; command = command.subcommand()) {
      if (command.hasMatchedOption(VerboseOption.NAME)) {
        return true;
      }
    }
    return false;
  }

  private static int failed(Exception e, CommandLine command, ParseResult parseResult) {
    PrintWriter err = command.getErr();
    err.println(command.getCommandName() + ": " + describe(e));
    if (verbose(parseResult)) {
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      err.print(InboxDataSources.maskPasswords(trace.toString()));
    }
    err.flush();
    return command.getCommandSpec().exitCodeOnExecutionException();
  }

  /** picocli's own handler, with the message (which may echo a value) and the usage masked. */
  private static int badParameter(ParameterException e, String[] args) {
    CommandLine command = e.getCommandLine();
    PrintWriter err = command.getErr();
    err.println(command.getColorScheme().errorText(InboxDataSources.maskPasswords(e.getMessage())));
    if (!UnmatchedArgumentException.printSuggestions(e, err)) {
      err.print(InboxDataSources.maskPasswords(command.getUsageMessage(command.getColorScheme())));
    }
    err.flush();
    return command.getCommandSpec().exitCodeOnInvalidInput();
  }

  private static String describe(Exception e) {
    if (e instanceof ExampleFailure) {
      return e.getMessage();
    }
    Throwable root = rootCause(e);
    return "failed with "
        + root.getClass().getSimpleName()
        + ": "
        + InboxDataSources.maskPasswords(root.getMessage())
        + "; run it again with --verbose for the stack trace";
  }

  /**
   * A failure to reach or use the database of {@code --jdbc-url}.
   *
   * @param doing what could not be done, such as "cannot connect to"
   */
  static ExampleFailure database(String doing, String jdbcUrl, Throwable e) {
    String where = "PostgreSQL at " + PostgresUrls.where(jdbcUrl) + " (--jdbc-url)";
    String network = networkReason(e);
    if (network != null) {
      return new ExampleFailure(
          doing
              + " "
              + where
              + ": "
              + network
              + "; check that PostgreSQL runs there and that --jdbc-url names its host, port and"
              + " database",
          e);
    }
    SQLException sql = find(e, SQLException.class);
    String state = sql == null || sql.getSQLState() == null ? "" : sql.getSQLState();
    String reason = sql == null ? rootCause(e).toString() : sql.getMessage();
    String advice;
    if (state.startsWith("28") || state.equals("08004")) {
      advice =
          "check the user and the password (user= and password= in --jdbc-url, or a ~/.pgpass"
              + " line)";
    } else if (state.equals("3D000")) {
      advice = "create the database, or name an existing one in --jdbc-url";
    } else {
      reason = reason + (state.isEmpty() ? "" : " (SQLState " + state + ")");
      advice = "run it again with --verbose for the stack trace";
    }
    return new ExampleFailure(doing + " " + where + ": " + oneLine(reason) + "; " + advice, e);
  }

  /** A failure to connect to the broker of {@code --amqp-uri}. */
  static ExampleFailure amqp(ConnectionFactory factory, Throwable e) {
    String where =
        "RabbitMQ at "
            + factory.getHost()
            + ":"
            + factory.getPort()
            + " (virtual host '"
            + factory.getVirtualHost()
            + "', --amqp-uri)";
    String network = networkReason(e);
    if (network != null) {
      return new ExampleFailure(
          "cannot connect to "
              + where
              + ": "
              + network
              + "; check that RabbitMQ runs there and that --amqp-uri names its host and port",
          e);
    }
    if (find(e, AuthenticationFailureException.class) != null
        || find(e, PossibleAuthenticationFailureException.class) != null) {
      return new ExampleFailure(
          "cannot log in to "
              + where
              + " as '"
              + factory.getUsername()
              + "'; check the user, the password and the virtual host in --amqp-uri",
          e);
    }
    return new ExampleFailure(
        "cannot connect to "
            + where
            + ": "
            + oneLine(String.valueOf(rootCause(e).getMessage()))
            + "; run it again with --verbose for the stack trace",
        e);
  }

  /** Refused, unknown host, timed out: the network's answer in a few words, or null. */
  static String networkReason(Throwable e) {
    UnknownHostException unknown = find(e, UnknownHostException.class);
    if (unknown != null) {
      return "unknown host " + unknown.getMessage();
    }
    if (find(e, ConnectException.class) != null) {
      return "connection refused";
    }
    if (find(e, InterruptedIOException.class) != null) {
      return "no answer (timed out)";
    }
    SocketException socket = find(e, SocketException.class);
    return socket == null ? null : socket.getMessage();
  }

  static Throwable rootCause(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  private static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  private static String oneLine(String text) {
    return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ").trim();
  }
}
