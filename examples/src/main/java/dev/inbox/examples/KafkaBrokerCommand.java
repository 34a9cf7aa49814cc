package dev.inbox.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Runs the embedded KRaft broker on its own, for people without Kafka. */
@Command(
    name = "kafka-broker",
    mixinStandardHelpOptions = true,
    description = "Run a real one-node KRaft Kafka broker until stopped (Ctrl-C).")
final class KafkaBrokerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--port",
      defaultValue = "9092",
      description = "Client port (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--data-dir",
      defaultValue = "${sys:java.io.tmpdir}/inbox-kafka",
      description = "Data directory, kept across restarts (default: ${DEFAULT-VALUE}).")
  Path dataDir;

  @Override
  public Integer call() {
    Validate.port(spec, "--port", port);
    EmbeddedKafkaBroker broker;
    try {
      // A port in use is the common failure, and the broker would log it with its stack trace.
      if (port != 0) {
        try (ServerSocket probe = new ServerSocket()) {
          probe.bind(new InetSocketAddress("127.0.0.1", port));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      broker = EmbeddedKafkaBroker.start(port, dataDir);
    } catch (RuntimeException e) {
      throw new ExampleFailure(
          "cannot start a Kafka broker on port "
              + port
              + " with data in "
              + dataDir
              + ": "
              + CommandErrors.rootCause(e).getMessage()
              + "; choose another --port, or a --data-dir of its own",
          e);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "kafka-broker-shutdown"));
    System.out.println(
        "Kafka broker listening on " + broker.bootstrapServers() + ", data in " + dataDir);
    broker.awaitShutdown();
    return 0;
  }
}
