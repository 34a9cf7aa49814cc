package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import dev.inbox.testing.Await;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestKafka;
import dev.inbox.testing.TestStorage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/** A real KRaft broker, a fresh schema with an effects table per test, and waiting helpers. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class KafkaTestSupport {
  protected TestKafka kafka;
  protected HikariDataSource dataSource;
  protected String schema;
  protected EffectsTable effects;
  protected final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  void start() {
    kafka = TestKafka.shared();
    dataSource = TestDataSources.pool(20);
  }

  @AfterAll
  void stop() {
    dataSource.close();
  }

  @BeforeEach
  void freshSchema() throws Exception {
    schema = TestDataSources.newSchema("kafka");
    effects = new EffectsTable(dataSource, schema);
    effects.create();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    closeables.clear();
  }

  protected InboxSettings.Builder settings() {
    return settings(schema);
  }

  /** An inbox's settings in the schema, with no janitor. */
  static InboxSettings.Builder settings(String schema) {
    return InboxSettings.builder()
        .schema(schema)
        .storage(Storage.valueOf(TestStorage.name()))
        .janitorInterval(Duration.ZERO);
  }

  protected Inbox inbox(InboxSettings settings) {
    Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build();
    closeables.add(inbox);
    return inbox;
  }

  protected static String newGroup() {
    return "group-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** A loop of string records on the topic, for the test to add its handler to. */
  protected InboxKafkaConsumer.Builder<String, String> consumer(
      Inbox inbox, String topic, String group) {
    return InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
        .properties(consumerProperties(group))
        .topics(topic)
        .inbox(inbox);
  }

  /** A started loop whose handler writes one effect per new record. */
  protected InboxKafkaConsumer<String, String> startConsumer(
      Inbox inbox, String topic, String group) {
    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox, topic, group)
            .handler(
                (record, tx) ->
                    effects.apply(
                        tx,
                        new String(record.headers().lastHeader("idempotency-key").value()),
                        Long.parseLong(record.value())))
            .build()
            .start();
    closeables.add(consumer);
    return consumer;
  }

  protected Map<String, Object> consumerProperties(String group) {
    return consumerProperties(kafka.bootstrapServers(), group);
  }

  /** A consumer of the group that starts at the earliest offset, 500 records a poll at most. */
  static Map<String, Object> consumerProperties(String bootstrapServers, String group) {
    return Map.of(
        "bootstrap.servers",
        bootstrapServers,
        "group.id",
        group,
        "auto.offset.reset",
        "earliest",
        "max.poll.records",
        500);
  }

  /** Waits until the group's committed offsets reach the end of every partition of the topic. */
  protected void awaitFullyCommitted(String group, String topic, Duration timeout)
      throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      int partitions =
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
      Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
      for (int p = 0; p < partitions; p++) {
        latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      Map<TopicPartition, Long> ends =
          admin.listOffsets(latest).all().get().entrySet().stream()
              .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
      await(
          "group " + group + " to commit up to " + ends,
          timeout,
          () -> {
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            return ends.entrySet().stream()
                .allMatch(
                    e ->
                        committed.get(e.getKey()) != null
                            && committed.get(e.getKey()).offset() >= e.getValue());
          });
    }
  }

  protected static void await(String what, Duration timeout, Callable<Boolean> condition)
      throws Exception {
    Await.until(what, timeout, condition);
  }

  /** The {@code inbox.kafka.records} of the topic counted with this outcome. */
  static double count(MeterRegistry registry, String topic, String outcome) {
    Counter counter =
        registry.find("inbox.kafka.records").tag("topic", topic).tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  /** Exactly one effect per distinct key, and the exact sum. */
  protected void assertExactlyOnce(PaymentStream stream) throws Exception {
    assertThat(effects.count()).as("effects").isEqualTo(stream.distinct());
    assertThat(effects.distinctKeys()).as("distinct keys").isEqualTo(stream.distinct());
    assertThat(effects.sum()).as("sum of amounts").isEqualTo(stream.expectedSum());
  }

  /** Sends the records in order, each acknowledged before the next. */
  protected void sendAll(List<ProducerRecord<String, String>> records) throws Exception {
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            Map.of("bootstrap.servers", kafka.bootstrapServers()),
            new StringSerializer(),
            new StringSerializer())) {
      for (ProducerRecord<String, String> record : records) {
        producer.send(record).get();
      }
    }
  }

  /** A record whose idempotency-key header is its Kafka key. */
  protected static ProducerRecord<String, String> withKey(String topic, String key, String value) {
    ProducerRecord<String, String> record = new ProducerRecord<>(topic, key, value);
    record.headers().add("idempotency-key", key.getBytes(StandardCharsets.UTF_8));
    return record;
  }

  /** The dead letters' headers, by the original record's Kafka key. */
  protected Map<String, Map<String, String>> readDeadLetters(String topic, int expected)
      throws Exception {
    Map<String, Map<String, String>> letters = new HashMap<>();
    try (KafkaConsumer<String, byte[]> reader =
        new KafkaConsumer<>(
            Map.of(
                "bootstrap.servers", kafka.bootstrapServers(),
                "group.id", newGroup(),
                "auto.offset.reset", "earliest"),
            new StringDeserializer(),
            new ByteArrayDeserializer())) {
      reader.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (letters.size() < expected && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, byte[]> record : reader.poll(Duration.ofMillis(200))) {
          Map<String, String> headers = new HashMap<>();
          record
              .headers()
              .forEach(h -> headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8)));
          letters.put(record.key(), headers);
        }
      }
      // Anything beyond the expected letters would be a double dead-lettering.
      for (ConsumerRecord<String, byte[]> extra : reader.poll(Duration.ofMillis(500))) {
        letters.put("unexpected-" + extra.offset(), Map.of());
      }
    }
    return letters;
  }
}
