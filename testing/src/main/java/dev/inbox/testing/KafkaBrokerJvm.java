package dev.inbox.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.JarURLConnection;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.KafkaException;

/**
 * A real one-node KRaft broker (combined broker and controller) in a child JVM, on the jars of
 * Kafka {@code kafka-broker.version} that the module {@code inbox-testing-kafka-broker} lists, so
 * that the test JVM's kafka-clients, whichever version a build tests, never share a JVM with the
 * broker's own. Its data and output are in a new temporary directory, deleted when the broker
 * stops: when this JVM exits, or dies, the child's standard input closes and the child halts.
 */
final class KafkaBrokerJvm {
  private static final String MAIN_CLASS = "dev.inbox.testing.broker.KafkaBrokerProcess";
  private static final String CLASSPATH = "dev/inbox/testing/broker/kafka-broker.classpath";

  /** How long the broker may take to answer, on a busy machine. */
  private static final long READY_TIMEOUT_MS = 180_000;

  /** Tries with new ports: another process can take a free port before the broker binds it. */
  private static final int ATTEMPTS = 3;

  private KafkaBrokerJvm() {}

  /**
   * Starts the broker and waits until it answers; stops it when this JVM exits.
   *
   * @return its bootstrap servers
   */
  static String start() {
    IllegalStateException failure = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        return startOnce();
      } catch (IllegalStateException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    throw failure;
  }

  private static String startOnce() {
    Path directory = null;
    Process process = null;
    try {
      directory = Files.createTempDirectory("test-kafka-");
      // In the directory, so that a child whose parent was killed deletes its output too.
      Path log = directory.resolve("broker.log");
      int clientPort = freePort();
      int controllerPort = freePortOtherThan(clientPort);
      Path config = directory.resolve("server.properties");
      try (Writer out = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
        properties(clientPort, controllerPort, directory.resolve("logs"))
            .store(out, "the tests' KRaft broker (inbox-testing KafkaBrokerJvm)");
      }
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx512m");
      command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
      command.add("-cp");
      command.add(brokerClassPath());
      command.add(MAIN_CLASS);
      command.add(config.toString());
      command.add(directory.toString());
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      Process started = process;
      Path dir = directory;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(started, dir), "stop-test-kafka"));
      String bootstrapServers = "127.0.0.1:" + clientPort;
      awaitReady(process, bootstrapServers, log);
      return bootstrapServers;
    } catch (IOException e) {
      if (process != null) {
        stop(process, directory);
      }
      throw new UncheckedIOException("could not start the tests' Kafka broker in " + directory, e);
    } catch (RuntimeException e) {
      if (process != null) {
        stop(process, directory);
      }
      throw e;
    }
  }

  private static Properties properties(int clientPort, int controllerPort, Path logDirs) {
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
    p.setProperty("log.dirs", logDirs.toString());
    p.setProperty("offsets.topic.replication.factor", "1");
    p.setProperty("offsets.topic.num.partitions", "4");
    p.setProperty("transaction.state.log.replication.factor", "1");
    p.setProperty("transaction.state.log.min.isr", "1");
    p.setProperty("share.coordinator.state.topic.replication.factor", "1");
    p.setProperty("share.coordinator.state.topic.min.isr", "1");
    p.setProperty("group.initial.rebalance.delay.ms", "0");
    return p;
  }

  /**
   * The child's class path: the broker module's own classes (found next to its resource, in its jar
   * or its classes directory), then the Kafka jars its build listed.
   */
  private static String brokerClassPath() throws IOException {
    URL list = KafkaBrokerJvm.class.getClassLoader().getResource(CLASSPATH);
    if (list == null) {
      throw new IllegalStateException(
          CLASSPATH
              + " is not on the class path: the module inbox-testing-kafka-broker writes it when it"
              + " is built; build it with -am");
    }
    String jars;
    try (InputStream in = list.openStream()) {
      jars = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    return codeLocation(list) + File.pathSeparator + jars;
  }

  private static Path codeLocation(URL resource) throws IOException {
    try {
      URLConnection connection = resource.openConnection();
      if (connection instanceof JarURLConnection jar) {
        URL jarFile = jar.getJarFileURL();
        if ("file".equals(jarFile.getProtocol())) {
          return Path.of(jarFile.toURI());
        }
        // A jar nested in an executable Spring Boot jar (benchmarks-spring): a child JVM cannot
        // read it there, so it gets a copy of its own.
        Path copy = Files.createTempFile("inbox-testing-kafka-broker", ".jar");
        copy.toFile().deleteOnExit();
        try (InputStream in = jarFile.openStream()) {
          Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
        }
        return copy;
      }
      Path file = Path.of(resource.toURI());
      // dev/inbox/testing/broker/kafka-broker.classpath: five levels below the classes directory.
      return file.getParent().getParent().getParent().getParent().getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot read the location of " + resource, e);
    }
  }

  /**
   * Waits until the broker describes its cluster, or fails with the child's output if it exits or
   * does not answer in time.
   */
  private static void awaitReady(Process process, String bootstrapServers, Path log)
      throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000))) {
      while (true) {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "the tests' Kafka broker exited with "
                  + process.exitValue()
                  + " before it answered; its output:\n"
                  + Files.readString(log));
        }
        try {
          if (!admin.describeCluster().nodes().get().isEmpty()) {
            return;
          }
        } catch (ExecutionException | KafkaException e) {
          // Not listening yet, or not done starting: ask again.
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the tests' Kafka broker did not answer within "
                  + READY_TIMEOUT_MS
                  + " ms at "
                  + bootstrapServers
                  + "; its output:\n"
                  + Files.readString(log));
        }
        Thread.sleep(100);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the tests' Kafka broker", e);
    }
  }

  /**
   * Closes the child's standard input, which makes it halt, and deletes its directory once it is
   * gone (the child deletes it too, for a parent killed with kill -9, but races its broker's
   * writes).
   */
  private static void stop(Process process, Path directory) {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    try (Stream<Path> files = Files.walk(directory)) {
      for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(file);
      }
    } catch (IOException e) {
      // Left in the temporary directory.
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

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
