package dev.inbox.examples;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.qpid.server.SystemLauncher;
import org.apache.qpid.server.model.SystemConfig;

/**
 * An AMQP 0-9-1 broker in this JVM, Apache Qpid Broker-J with an in-memory store, for machines
 * without RabbitMQ. It speaks what the adapter needs (publisher confirms, qos, manual ack and nack)
 * but not RabbitMQ's queue arguments, so queues on it are declared with Qpid's own dead-letter
 * queue instead; see {@link PaymentQueues}.
 */
final class EmbeddedAmqpBroker implements AutoCloseable {
  private static final String CONFIG = "qpid-initial-config.json";

  private final SystemLauncher launcher;
  private final int port;

  private EmbeddedAmqpBroker(SystemLauncher launcher, int port) {
    this.launcher = launcher;
    this.port = port;
  }

  static EmbeddedAmqpBroker start() throws IOException {
    int port = EmbeddedKafkaBroker.freePort();
    Path workDir = Files.createTempDirectory("inbox-examples-amqp");
    URL config = EmbeddedAmqpBroker.class.getResource(CONFIG);
    Map<String, String> context = new HashMap<>();
    context.put("qpid.amqp_port", Integer.toString(port));
    context.put("qpid.work_dir", workDir.toString());
    context.put("qpid.home_dir", workDir.toString());
    Map<String, Object> attributes = new HashMap<>();
    attributes.put(SystemConfig.TYPE, "Memory");
    attributes.put(SystemConfig.INITIAL_CONFIGURATION_LOCATION, config.toExternalForm());
    attributes.put(SystemConfig.STARTUP_LOGGED_TO_SYSTEM_OUT, false);
    attributes.put(SystemConfig.CONTEXT, context);
    keepQpidFromHaltingTheJvm();
    SystemLauncher launcher = new SystemLauncher();
    try {
      launcher.startup(attributes);
    } catch (Exception e) {
      throw new IOException("the embedded AMQP broker (Qpid Broker-J) did not start: " + e, e);
    }
    return new EmbeddedAmqpBroker(launcher, port);
  }

  /**
   * Qpid's housekeeping threads call {@code Runtime.halt(1)} when a task throws and no default
   * uncaught-exception handler is set, which would turn the demo's exit code into a lie (and kill a
   * test JVM). With a handler, they log instead.
   */
  private static void keepQpidFromHaltingTheJvm() {
    if (Thread.getDefaultUncaughtExceptionHandler() == null) {
      Thread.setDefaultUncaughtExceptionHandler(
          (thread, e) -> System.err.println("uncaught in " + thread.getName() + ": " + e));
    }
  }

  String uri() {
    return "amqp://guest:guest@127.0.0.1:" + port;
  }

  @Override
  public void close() {
    launcher.shutdown();
  }
}
