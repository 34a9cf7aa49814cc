package dev.inbox.kafka;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.NonRetryableException;
import dev.inbox.testing.Await;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDatabase;
import dev.inbox.testing.TestKafka;
import dev.inbox.testing.acceptance.ConsumerAcceptanceSuite;
import dev.inbox.testing.acceptance.ConsumerFixture;
import dev.inbox.testing.acceptance.DeadLetter;
import dev.inbox.testing.acceptance.HandlerKind;
import dev.inbox.testing.acceptance.Payments;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The acceptance suite's fixture on Kafka: a topic of two partitions, one consumer group (the
 * inbox's scope), its {@code .DLT} topic, and consumers of string records whose value is the
 * amount.
 */
final class KafkaFixture implements ConsumerFixture {
  private final TestKafka kafka;
  private final String schema;
  private final String topic;
  private final String group = "group-" + UUID.randomUUID().toString().substring(0, 8);
  private final Inbox inbox;
  private final Admin admin;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  KafkaFixture(TestKafka kafka, DataSource dataSource, String schema) {
    this.kafka = kafka;
    this.schema = schema;
    this.topic = kafka.newTopic("acceptance", 2);
    this.inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(
                KafkaTestSupport.settings(schema)
                    .maxAttempts(ConsumerAcceptanceSuite.MAX_ATTEMPTS)
                    .build())
            .migrate(true)
            .build();
    this.admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
  }

  /** Hands the records to the payments, each on its own or all of a batch at once. */
  static void handleWith(
      InboxKafkaConsumer.Builder<String, String> builder, HandlerKind kind, Payments payments) {
    if (kind == HandlerKind.AT_ONCE) {
      builder.newRecordsHandler(
          (records, tx) ->
              payments.applyAll(
                  tx,
                  records.stream()
                      .map(r -> new PaymentStream.Message(r.key(), Long.parseLong(r.value())))
                      .toList()));
    } else {
      builder.handler(
          (record, tx) -> payments.apply(tx, record.key(), Long.parseLong(record.value())));
    }
  }

  @Override
  public String source() {
    return topic;
  }

  @Override
  public void publish(List<PaymentStream.Message> messages) throws Exception {
    PaymentSender.send(messages, kafka.bootstrapServers(), topic);
  }

  @Override
  public AutoCloseable startConsumer(HandlerKind kind, Payments payments) {
    InboxKafkaConsumer.Builder<String, String> builder =
        InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
            .properties(KafkaTestSupport.consumerProperties(kafka.bootstrapServers(), group))
            .topics(topic)
            .inbox(inbox)
            .meterRegistry(registry)
            .retryBackoff(Duration.ofMillis(10), Duration.ofMillis(50));
    handleWith(builder, kind, payments);
    return builder.build().start();
  }

  @Override
  public ChildJvm startChild(HandlerKind kind) throws Exception {
    TestDatabase db = TestDatabase.shared();
    return ChildJvm.start(
        ConsumerProcess.class,
        List.of(
            kafka.bootstrapServers(),
            topic,
            group,
            db.jdbcUrl(),
            db.user() == null ? "" : db.user(),
            schema,
            kind.name()));
  }

  @Override
  public long unsettled() throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < 2; p++) {
      latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(latest).all().get();
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    long unsettled = 0;
    for (var end : ends.entrySet()) {
      OffsetAndMetadata done = committed.get(end.getKey());
      unsettled += end.getValue().offset() - (done == null ? 0 : done.offset());
    }
    return unsettled;
  }

  @Override
  public List<DeadLetter> deadLetters(int expected) throws Exception {
    String deadLetterTopic = KafkaDeadLetterPublisher.defaultTopic(topic);
    List<DeadLetter> letters = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> reader =
        new KafkaConsumer<>(
            Map.of("bootstrap.servers", kafka.bootstrapServers()),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      Await.until(
          "the dead-letter topic",
          Duration.ofSeconds(30),
          () -> !reader.partitionsFor(deadLetterTopic).isEmpty());
      List<TopicPartition> partitions =
          reader.partitionsFor(deadLetterTopic).stream()
              .map(p -> new TopicPartition(deadLetterTopic, p.partition()))
              .toList();
      reader.assign(partitions);
      reader.seekToBeginning(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (letters.size() < expected && System.nanoTime() < deadline) {
        reader.poll(Duration.ofMillis(200)).forEach(record -> letters.add(letter(record)));
      }
      // Anything beyond the expected letters would be a double dead-lettering.
      reader.poll(Duration.ofMillis(500)).forEach(record -> letters.add(letter(record)));
    }
    return letters;
  }

  private static DeadLetter letter(ConsumerRecord<byte[], byte[]> record) {
    Map<String, String> headers = new HashMap<>();
    for (Header header : record.headers()) {
      headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
    }
    return new DeadLetter(
        headers.get(KeyExtractor.DEFAULT_HEADER),
        new String(record.value(), StandardCharsets.UTF_8),
        headers.get(KafkaDeadLetterPublisher.ORIGINAL_TOPIC),
        headers.get(DeadLetterHeaders.REASON),
        headers.get(DeadLetterHeaders.DETAIL),
        headers.get(DeadLetterHeaders.KEY),
        Integer.parseInt(headers.get(DeadLetterHeaders.ATTEMPTS)),
        headers.get(DeadLetterHeaders.EXCEPTION_CLASS),
        headers.get(DeadLetterHeaders.EXCEPTION_MESSAGE));
  }

  @Override
  public int attempts(String key) {
    return inbox.admin().find(group, key).map(InboxRecord::attempts).orElse(0);
  }

  @Override
  public long counted(String outcome) {
    return (long) KafkaTestSupport.count(registry, topic, outcome);
  }

  @Override
  public RuntimeException nonRetryable(String message) {
    return new NonRetryableException(message);
  }

  @Override
  public void close() throws Exception {
    inbox.close();
    admin.close();
  }
}
