package dev.inbox.spring.kafka;

import dev.inbox.testing.Await;
import dev.inbox.testing.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.kafka.core.KafkaTemplate;

/** What the starter's Kafka tests send and read back on the shared broker. */
final class KafkaChecks {
  private KafkaChecks() {}

  /** Sends a record whose inbox key is {@code key}, in its {@code idempotency-key} header. */
  static void send(
      KafkaTemplate<String, String> kafka,
      String topic,
      Integer partition,
      String key,
      String value)
      throws Exception {
    ProducerRecord<String, String> record = new ProducerRecord<>(topic, partition, key, value);
    record.headers().add("idempotency-key", key.getBytes(StandardCharsets.UTF_8));
    kafka.send(record).get();
  }

  /** The offsets the group has committed on the topic, summed over its partitions. */
  static long committed(TestKafka broker, String group, String topic) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      return offsets.entrySet().stream()
          .filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
          .mapToLong(e -> e.getValue().offset())
          .sum();
    }
  }

  /** Until the group has committed past every record: each was handled or acknowledged. */
  static void awaitCommitted(TestKafka broker, String group, String topic, long records)
      throws Exception {
    Await.until(
        group + " commits " + records + " records of " + topic,
        Duration.ofSeconds(90),
        () -> committed(broker, group, topic) >= records);
  }

  /**
   * The dead letters of {@code topic}'s records on the dead-letter topic's partition 0, in the
   * order published, up to the one of {@code lastKey}: the dead-letter topic is shared, so only
   * records of that topic count.
   */
  static List<ConsumerRecord<String, String>> deadLettersUpTo(
      TestKafka broker, String deadLetterTopic, String topic, String lastKey) throws Exception {
    return deadLetters(
        broker,
        deadLetterTopic,
        r -> {
          Header original = r.headers().lastHeader("kafka_dlt-original-topic");
          return original != null
              && topic.equals(new String(original.value(), StandardCharsets.UTF_8));
        },
        lastKey);
  }

  /** The dead letters {@code kept}, in the order published, until one of {@code lastKey}. */
  static List<ConsumerRecord<String, String>> deadLetters(
      TestKafka broker,
      String deadLetterTopic,
      Predicate<ConsumerRecord<String, String>> kept,
      String lastKey)
      throws Exception {
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "dlt-reader-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.assign(List.of(new TopicPartition(deadLetterTopic, 0)));
      List<ConsumerRecord<String, String>> found = new ArrayList<>();
      Await.until(
          "the dead letter of " + lastKey,
          Duration.ofSeconds(90),
          () -> {
            consumer
                .poll(Duration.ofMillis(200))
                .forEach(
                    r -> {
                      if (kept.test(r)) {
                        found.add(r);
                      }
                    });
            return found.stream().anyMatch(r -> lastKey.equals(r.key()));
          });
      return found;
    }
  }
}
