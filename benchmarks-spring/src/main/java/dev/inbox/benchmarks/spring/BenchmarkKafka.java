package dev.inbox.benchmarks.spring;

import dev.inbox.testing.TestKafka;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The benchmark's Kafka: {@code --bootstrap-servers} when given, else the testing module's one-node
 * KRaft broker started in this JVM (stopped when the JVM exits).
 */
final class BenchmarkKafka {
  private final TestKafka kafka;

  private BenchmarkKafka(TestKafka kafka) {
    this.kafka = kafka;
  }

  static BenchmarkKafka open(String bootstrapServers) {
    if (bootstrapServers != null) {
      // TestKafka takes an explicit broker from this property before starting one of its own.
      System.setProperty(TestKafka.PROPERTY, bootstrapServers);
    }
    // Kafka's storage tool prints to stdout while it formats the broker's directory; stdout is
    // for the benchmark's JSON line only.
    PrintStream stdout = System.out;
    System.setOut(System.err);
    try {
      return new BenchmarkKafka(TestKafka.shared());
    } finally {
      System.setOut(stdout);
    }
  }

  String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  /** A fresh one-partition topic whose name starts with {@code prefix}. */
  String newTopic(String prefix) {
    return kafka.newTopic(prefix, 1);
  }

  /**
   * Produces the workload in order, re-sends included, with the payment id as the record key and in
   * the {@value PaymentWrites#KEY_HEADER} header, and waits until every record is acknowledged.
   */
  void produce(String topic, Workload workload) {
    Map<String, Object> properties = new HashMap<>(kafka.producerConfig());
    properties.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    AtomicReference<Exception> failure = new AtomicReference<>();
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(properties)) {
      for (Workload.Payment payment : workload.messages) {
        ProducerRecord<String, byte[]> record =
            new ProducerRecord<>(topic, payment.id(), PaymentWrites.body(payment));
        record
            .headers()
            .add(PaymentWrites.KEY_HEADER, payment.id().getBytes(StandardCharsets.UTF_8));
        producer.send(record, (metadata, e) -> failure.compareAndSet(null, e));
      }
      producer.flush();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("producing to " + topic + " failed", failure.get());
    }
  }
}
