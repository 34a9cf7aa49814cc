package dev.inbox.examples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The examples jar's entry point: {@code java -jar inbox-examples.jar <subcommand> --help}. */
@Command(
    name = "inbox-examples",
    mixinStandardHelpOptions = true,
    version = "inbox-examples 0.1.0",
    description = "Exactly-once payments over Kafka, RabbitMQ and HTTP on one PostgreSQL database.",
    subcommands = {
      DemoCommand.class,
      HttpServerCommand.class,
      KafkaBrokerCommand.class,
      KafkaProducerCommand.class,
      KafkaConsumerCommand.class,
      RabbitProducerCommand.class,
      RabbitConsumerCommand.class,
      CommandLine.HelpCommand.class
    })
public final class InboxExamples implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.setProperty(
        "org.slf4j.simpleLogger.defaultLogLevel",
        System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    System.exit(commandLine().execute(args));
  }

  /** The command line, for tests that run subcommands in-process. */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new InboxExamples());
    CommandErrors.install(cli);
    return cli;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand; try `demo`.");
  }
}
