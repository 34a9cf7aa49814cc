package dev.inbox.examples;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The demo: payments with re-sends over Kafka, RabbitMQ and HTTP into one database, a consumer
 * killed with kill -9 midway and started again, and a final check that every payment took effect
 * exactly once.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Send payments with duplicates over Kafka, RabbitMQ and HTTP, kill a consumer midway,",
      "and check that every payment took effect exactly once. Exit code 0 if and only if it did.",
      "With no flags it starts an embedded PostgreSQL and an embedded Kafka broker by itself."
    })
final class DemoCommand implements Callable<Integer> {
  static final String SCOPE = "demo";
  static final String API_KEY = "demo-key";

  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--count",
      defaultValue = "10000",
      description =
          "Payments to send over all channels, re-sends included (default: ${DEFAULT-VALUE}).")
  int count;

  @Option(
      names = "--duplicate-rate",
      defaultValue = "0.2",
      description = "Fraction of sends that repeat an earlier payment (default: ${DEFAULT-VALUE}).")
  double duplicateRate;

  @Option(
      names = "--seed",
      defaultValue = "42",
      description = "Random seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--jdbc-url", description = "Use this PostgreSQL instead of an embedded one.")
  String jdbcUrl;

  @Option(
      names = "--bootstrap-servers",
      description = "Use this Kafka instead of an embedded broker.")
  String bootstrapServers;

  @Option(
      names = "--amqp-uri",
      description =
          "Use this RabbitMQ (default: the local one on 5672 if it answers, else an embedded"
              + " AMQP broker).")
  String amqpUri;

  @Option(
      names = "--embedded-amqp",
      description =
          "Use the embedded AMQP broker (Apache Qpid Broker-J) even when a local RabbitMQ answers.")
  boolean embeddedAmqp;

  @Option(
      names = "--timeout",
      defaultValue = "300",
      description = "Seconds to wait for every payment to take effect (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Option(names = "--no-kill", description = "Do not kill and restart the Kafka consumer midway.")
  boolean noKill;

  @Override
  public Integer call() throws Exception {
    Validate.positive(spec, "--count", count);
    Validate.rate(spec, "--duplicate-rate", duplicateRate);
    Validate.jdbcUrl(spec, "--jdbc-url", jdbcUrl);
    Validate.hostPorts(spec, "--bootstrap-servers", bootstrapServers);
    Validate.amqpUri(spec, "--amqp-uri", amqpUri);
    Validate.positive(spec, "--timeout", timeoutSeconds);
    if (embeddedAmqp && amqpUri != null) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "give either --amqp-uri or --embedded-amqp, not both");
    }
    PrintStream out = System.out;
    try (DemoServices services =
            DemoServices.start(jdbcUrl, bootstrapServers, amqpUri, embeddedAmqp, out);
        HikariDataSource dataSource =
            ConsumerDatabase.pool(services.jdbcUrl, InboxDataSources.DEFAULT_POOL_SIZE)) {
      InboxSettings settings = InboxSettings.defaults();
      PaymentsDatabase.migrate(dataSource, settings);
      DemoPlan plan = DemoPlan.create(count, duplicateRate, seed);
      return new DemoRun(services, dataSource, settings, plan, timeoutSeconds, !noKill, out).run();
    }
  }
}
