package dev.inbox.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The servers the demo runs against: the ones given by flags, else embedded ones it starts itself
 * (PostgreSQL and a KRaft broker), and for AMQP the local RabbitMQ when one answers on 5672, else
 * an embedded Qpid Broker-J.
 */
final class DemoServices implements AutoCloseable {
  static final String LOCAL_AMQP = "amqp://guest:guest@127.0.0.1:5672";

  final String jdbcUrl;
  final String bootstrapServers;

  final String amqpUri;

  private final List<AutoCloseable> started = new ArrayList<>();

  private DemoServices(String jdbcUrl, String bootstrapServers, String amqpUri) {
    this.jdbcUrl = jdbcUrl;
    this.bootstrapServers = bootstrapServers;
    this.amqpUri = amqpUri;
  }

  static DemoServices start(
      String jdbcUrl,
      String bootstrapServers,
      String amqpUri,
      boolean embeddedAmqp,
      PrintStream out)
      throws IOException {
    List<AutoCloseable> started = new ArrayList<>();
    String db = jdbcUrl;
    if (db == null) {
      out.println("Starting an embedded PostgreSQL 17 ...");
      EmbeddedDatabase embedded = EmbeddedDatabase.start();
      started.add(embedded);
      db = embedded.jdbcUrl();
    }
    String kafka = bootstrapServers;
    if (kafka == null) {
      out.println("Starting an embedded Kafka broker (KRaft) ...");
      Path dataDir = Files.createTempDirectory("inbox-demo-kafka");
      EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(0, dataDir);
      started.add(broker);
      kafka = broker.bootstrapServers();
    }
    String amqp = amqpUri;
    if (amqp == null && !embeddedAmqp && answers("127.0.0.1", 5672)) {
      amqp = LOCAL_AMQP;
    }
    if (amqp == null) {
      out.println("Starting an embedded AMQP 0-9-1 broker (Apache Qpid Broker-J) ...");
      EmbeddedAmqpBroker broker = EmbeddedAmqpBroker.start();
      started.add(broker);
      amqp = broker.uri();
    }
    DemoServices services = new DemoServices(db, kafka, amqp);
    services.started.addAll(started);
    return services;
  }

  static boolean answers(String host, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    List<AutoCloseable> reverse = new ArrayList<>(started);
    Collections.reverse(reverse);
    for (AutoCloseable service : reverse) {
      try {
        service.close();
      } catch (Exception e) {
        System.err.println("stopping " + service.getClass().getSimpleName() + " failed: " + e);
      }
    }
  }
}
