package dev.inbox.examples;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A real one-node KRaft Kafka broker (combined broker and controller) from Kafka's own artifacts,
 * in this JVM. Its data directory is kept, so that a broker started again on the same directory and
 * port finds its topics and committed offsets.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
  private final KafkaRaftServer server;
  private final int port;

  private EmbeddedKafkaBroker(KafkaRaftServer server, int port) {
    this.server = server;
    this.port = port;
  }

  /**
   * Formats the data directory if it is new, and starts the broker.
   *
   * @param port the client port; 0 picks a free one
   */
  public static EmbeddedKafkaBroker start(int port, Path dataDir) {
    try {
      int clientPort = port == 0 ? freePort() : port;
      Files.createDirectories(dataDir);
      Path controllerPortFile = dataDir.resolve("controller.port");
      int controllerPort =
          Files.exists(controllerPortFile)
              ? Integer.parseInt(Files.readString(controllerPortFile).trim())
              : freePortOtherThan(clientPort);
      Files.writeString(controllerPortFile, Integer.toString(controllerPort));
      Properties props = properties(clientPort, controllerPort, dataDir);
      Path config = dataDir.resolve("server.properties");
      try (Writer out = Files.newBufferedWriter(config)) {
        props.store(out, "written by inbox-examples kafka-broker");
      }
      format(config, dataDir);
      KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props), Time.SYSTEM);
      server.startup();
      return new EmbeddedKafkaBroker(server, clientPort);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the Kafka broker in " + dataDir, e);
    }
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Blocks until the broker has shut down, for the {@code kafka-broker} command. */
  public void awaitShutdown() {
    server.awaitShutdown();
  }

  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
  }

  private static Properties properties(int clientPort, int controllerPort, Path dataDir) {
    Properties p = new Properties();
    p.setProperty("process.roles", "broker,controller");
    p.setProperty("node.id", "1");
    p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.setProperty(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + clientPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + clientPort);
    p.setProperty("controller.listener.names", "CONTROLLER");
    p.setProperty("inter.broker.listener.name", "PLAINTEXT");
    p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.setProperty("log.dirs", dataDir.resolve("logs").toString());
    p.setProperty("num.partitions", "4");
    p.setProperty("offsets.topic.replication.factor", "1");
    p.setProperty("offsets.topic.num.partitions", "4");
    p.setProperty("transaction.state.log.replication.factor", "1");
    p.setProperty("transaction.state.log.min.isr", "1");
    p.setProperty("share.coordinator.state.topic.replication.factor", "1");
    p.setProperty("share.coordinator.state.topic.min.isr", "1");
    p.setProperty("group.initial.rebalance.delay.ms", "0");
    p.setProperty("auto.create.topics.enable", "true");
    return p;
  }

  private static void format(Path config, Path dataDir) {
    // Kafka 4 refuses --ignore-formatted with another cluster id, so a kept directory is reused.
    if (Files.exists(dataDir.resolve("logs").resolve("meta.properties"))) {
      return;
    }
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    String clusterId = Uuid.randomUuid().toString();
    int code;
    try (PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8)) {
      code =
          StorageTool.execute(
              new String[] {
                "format", "-t", clusterId, "-c", config.toString(), "--ignore-formatted"
              },
              out);
    }
    if (code != 0) {
      throw new IllegalStateException(
          "formatting the Kafka data directory "
              + dataDir
              + " failed: "
              + output.toString(StandardCharsets.UTF_8));
    }
  }

  /**
   * A free port other than {@code taken}. A port is free only until someone binds it, and the
   * kernel may hand the one just released straight back: two listeners on one port make the broker
   * refuse to start.
   */
  private static int freePortOtherThan(int taken) throws IOException {
    int port = freePort();
    while (port == taken) {
      port = freePort();
    }
    return port;
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
