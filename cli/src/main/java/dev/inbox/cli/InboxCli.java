package dev.inbox.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The CLI's entry point: {@code java -jar inbox-cli.jar <command> --help}. */
@Command(
    name = "inbox",
    mixinStandardHelpOptions = true,
    version = "inbox-cli 0.1.0",
    description = {
      "Look at and repair keys of an inbox table: counts, stuck keys, releases and settlements.",
      "Every release and settle is audited in the database (who, when, why, the record before"
          + " and after) and fences off a late lease holder.",
      "",
      "Exit codes: 0 done; 1 failed (database, file); 2 bad usage; 3 refused or not found,"
          + " nothing changed."
    },
    subcommands = {
      StatsCommand.class,
      ListCommand.class,
      ShowCommand.class,
      ReleaseCommand.class,
      SettleCommand.class,
      PurgeCommand.class,
      CommandLine.HelpCommand.class
    })
public final class InboxCli implements Runnable {
  /** A refusal: the key is not in a state the command may change, or there is no such key. */
  public static final int EXIT_REFUSED = 3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.setProperty(
        "org.slf4j.simpleLogger.defaultLogLevel",
        System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    System.exit(commandLine().execute(args));
  }

  /** The command line, for tests that run commands in-process. */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new InboxCli());
    CliErrors.install(cli);
    return cli;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "Missing command; try `stats` or `--help`.");
  }
}
