package dev.inbox.examples.spring;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts a real one-node KRaft broker (broker and controller in one) from Kafka's own server jars
 * in this JVM, before the application context, for a machine without Kafka: when the command line
 * says {@value #OPTION}, or when nothing sets {@code spring.kafka.bootstrap-servers}. The broker
 * keeps its data in a temporary directory for as long as the service runs, and stops after the
 * context's listeners and producers (it is the first bean registered, so the last one destroyed).
 */
final class EmbeddedKafka implements ApplicationContextInitializer<GenericApplicationContext> {
  /** The command-line option (a property without a value) that asks for the embedded broker. */
  static final String OPTION = "embedded-kafka";

  private static final String BOOTSTRAP_SERVERS = "spring.kafka.bootstrap-servers";
  private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);

  @Override
  public void initialize(GenericApplicationContext context) {
    ConfigurableEnvironment environment = context.getEnvironment();
    if (!environment.containsProperty(OPTION) && environment.containsProperty(BOOTSTRAP_SERVERS)) {
      return;
    }
    Broker broker = Broker.start();
    log.info("started an embedded KRaft broker at {}, data in {}", broker.address(), broker.dir);
    environment
        .getPropertySources()
        .addFirst(
            new MapPropertySource("embedded-kafka", Map.of(BOOTSTRAP_SERVERS, broker.address())));
    context.registerBean(
        "embeddedKafkaBroker",
        Broker.class,
        () -> broker,
        definition -> ((AbstractBeanDefinition) definition).setDestroyMethodName("close"));
  }

  /** The running broker. */
  static final class Broker implements AutoCloseable {
    private final KafkaRaftServer server;
    private final int port;
    private final Path dir;

    private Broker(KafkaRaftServer server, int port, Path dir) {
      this.server = server;
      this.port = port;
      this.dir = dir;
    }

    static Broker start() {
      try {
        Path dir = Files.createTempDirectory("inbox-examples-spring-kafka-");
        int port = freePort();
        Properties config = config(port, freePortOtherThan(port), dir);
        Path file = dir.resolve("server.properties");
        try (var out = Files.newBufferedWriter(file)) {
          config.store(out, "the embedded broker of inbox-examples-spring");
        }
        format(file);
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(config), Time.SYSTEM);
        server.startup();
        return new Broker(server, port, dir);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start the embedded Kafka broker", e);
      }
    }

    String address() {
      return "127.0.0.1:" + port;
    }

    @Override
    public void close() throws IOException {
      server.shutdown();
      server.awaitShutdown();
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }

    /** embedded-kafka.properties, with this broker's ports and directory. */
    private static Properties config(int port, int controllerPort, Path dir) throws IOException {
      Properties config = new Properties();
      try (InputStream in = EmbeddedKafka.class.getResourceAsStream("/embedded-kafka.properties")) {
        config.load(in);
      }
      String host = "127.0.0.1:";
      config.setProperty("controller.quorum.voters", "1@" + host + controllerPort);
      config.setProperty(
          "listeners", "PLAINTEXT://" + host + port + ",CONTROLLER://" + host + controllerPort);
      config.setProperty("log.dirs", dir.resolve("logs").toString());
      return config;
    }

    private static void format(Path config) {
      ByteArrayOutputStream output = new ByteArrayOutputStream();
      int code;
      try (PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8)) {
        String[] args = {"format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()};
        code = StorageTool.execute(args, out);
      }
      if (code != 0) {
        throw new IllegalStateException(
            "formatting the embedded Kafka broker's directory failed: "
                + output.toString(StandardCharsets.UTF_8));
      }
    }

    /**
     * A free port other than {@code taken}. A port is free only until someone binds it, and the
     * kernel may hand the one just released straight back: two listeners on one port make the
     * broker refuse to start.
     */
    private static int freePortOtherThan(int taken) throws IOException {
      int port = freePort();
      while (port == taken) {
        port = freePort();
      }
      return port;
    }

    private static int freePort() throws IOException {
      try (ServerSocket socket = new ServerSocket(0)) {
        return socket.getLocalPort();
      }
    }
  }
}
