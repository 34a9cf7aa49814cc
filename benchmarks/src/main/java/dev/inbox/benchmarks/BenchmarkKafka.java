package dev.inbox.benchmarks;

import dev.inbox.examples.EmbeddedKafkaBroker;
import dev.inbox.examples.KafkaProducers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka of the kafka and memory scenarios: {@code --bootstrap-servers} when given, else a real
 * one-node KRaft broker in this JVM on a temporary directory that is deleted on close.
 */
final class BenchmarkKafka implements AutoCloseable {
  private final String bootstrapServers;
  private final EmbeddedKafkaBroker broker;
  private final Path dataDir;

  private BenchmarkKafka(String bootstrapServers, EmbeddedKafkaBroker broker, Path dataDir) {
    this.bootstrapServers = bootstrapServers;
    this.broker = broker;
    this.dataDir = dataDir;
  }

  static BenchmarkKafka open(String bootstrapServers) throws IOException {
    if (bootstrapServers != null) {
      return new BenchmarkKafka(bootstrapServers, null, null);
    }
    Path dataDir = Files.createTempDirectory("inbox-bench-kafka");
    EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(0, dataDir);
    return new BenchmarkKafka(broker.bootstrapServers(), broker, dataDir);
  }

  String bootstrapServers() {
    return bootstrapServers;
  }

  /** Creates a topic with a random name that starts with {@code prefix}. */
  String newTopic(String prefix, int partitions) throws InterruptedException {
    String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("could not create topic " + name, e.getCause());
    }
    return name;
  }

  void deleteTopic(String topic) {
    try (Admin admin = admin()) {
      admin.deleteTopics(List.of(topic)).all().get();
    } catch (ExecutionException e) {
      // Only tidying up: a topic left behind does not affect later runs, which use new names.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Produces the workload in order, re-sends included, with the payment id in the {@value
   * PaymentCodec#KAFKA_HEADER} header and as the record key, and waits until every record is
   * acknowledged.
   */
  void produce(String topic, Workload workload) {
    Map<String, Object> properties = new HashMap<>(KafkaProducers.config(bootstrapServers));
    properties.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    AtomicReference<Exception> failure = new AtomicReference<>();
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(properties)) {
      for (Workload.Payment payment : workload.messages) {
        ProducerRecord<String, byte[]> record =
            new ProducerRecord<>(topic, payment.id(), PaymentCodec.body(payment));
        record
            .headers()
            .add(
                PaymentCodec.KAFKA_HEADER,
                payment.id().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        producer.send(record, (metadata, e) -> failure.compareAndSet(null, e));
      }
      producer.flush();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("producing to " + topic + " failed", failure.get());
    }
  }

  private Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
  }

  @Override
  public void close() {
    if (broker == null) {
      return;
    }
    broker.close();
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + dataDir, e);
    }
  }
}
