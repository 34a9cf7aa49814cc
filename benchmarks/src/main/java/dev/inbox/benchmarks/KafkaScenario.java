package dev.inbox.benchmarks;

import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.kafka.InboxKafkaConsumer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The {@code kafka} scenario: the workload is produced once to a fresh one-partition topic, then
 * each run consumes all of it from the start with a new consumer group. {@code inbox} is the
 * kafka-adapter's {@link InboxKafkaConsumer}. {@code plain} is a hand-written poll loop doing the
 * same business writes per poll in one transaction, then a synchronous offset commit, with
 * duplicates filtered by an in-memory set: the upper bound, since it stores no keys. With {@code
 * --handler at-once} both write each poll's new payments with one set-based statement, the inbox
 * through a {@link dev.inbox.kafka.NewRecordsHandler}.
 *
 * <p>A run is timed from its first non-empty poll to the commit of the offset of the last record,
 * so that joining the group is not counted. The variants take turns run by run ({@link
 * InterleavedRuns}).
 */
final class KafkaScenario {
  /** One partition: the adapter's per-partition transaction is then exactly plain's per poll. */
  static final int PARTITIONS = 1;

  private static final Duration RUN_TIMEOUT = Duration.ofMinutes(10);

  private final DataSource dataSource;
  private final Workload workload;
  private final String bootstrapServers;
  private final String topic;
  private final PaymentsSchema payments = new PaymentsSchema("bench_kafka");

  KafkaScenario(DataSource dataSource, Workload workload, String bootstrapServers, String topic) {
    this.dataSource = dataSource;
    this.workload = workload;
    this.bootstrapServers = bootstrapServers;
    this.topic = topic;
  }

  /** Produces the workload to a fresh topic, then measures {@code plain} and {@code inbox}. */
  static boolean runAll(BenchmarkRun run) throws Exception {
    try (BenchmarkKafka kafka = BenchmarkKafka.open(run.options.bootstrapServers)) {
      String topic = kafka.newTopic("bench-kafka", PARTITIONS);
      try {
        kafka.produce(topic, run.workload);
        KafkaScenario scenario =
            new KafkaScenario(run.dataSource, run.workload, kafka.bootstrapServers(), topic);
        return scenario.measure(run);
      } finally {
        kafka.deleteTopic(topic);
      }
    }
  }

  private boolean measure(BenchmarkRun run) throws Exception {
    return run.printThroughput(
        JsonLine.scenario("kafka").put("handler", run.options.handler),
        "partitions",
        PARTITIONS,
        "ratio_vs_plain",
        InterleavedRuns.repeat(
            run, List.of("plain", "inbox"), variant -> run(variant, run.options.handlerAtOnce())));
  }

  /**
   * One timed run of one variant with a new consumer group, checked afterwards.
   *
   * @param atOnce {@code --handler at-once}: each poll's new payments written in one statement
   */
  Measurement run(String variant, boolean atOnce) throws Exception {
    payments.reset(dataSource);
    String group = "bench-" + variant + "-" + UUID.randomUUID();
    double seconds = variant.equals("inbox") ? runInbox(group, atOnce) : runPlain(group, atOnce);
    return new Measurement(seconds, payments.correct(dataSource, workload));
  }

  private Map<String, Object> consumerProperties(String group) {
    Map<String, Object> properties = new HashMap<>();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    return properties;
  }

  private double runInbox(String group, boolean atOnce) throws Exception {
    InboxSettings settings =
        InboxSettings.builder().schema(payments.schema).janitorInterval(Duration.ZERO).build();
    ProgressConsumer[] progress = new ProgressConsumer[1];
    try (Inbox inbox =
        Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build()) {
      InboxKafkaConsumer.Builder<String, byte[]> builder =
          InboxKafkaConsumer.builder(new StringDeserializer(), new ByteArrayDeserializer())
              .properties(consumerProperties(group))
              .consumerFactory(
                  properties ->
                      progress[0] = new ProgressConsumer(properties, workload.messages.size()))
              .topics(topic)
              .inbox(inbox)
              .pollTimeout(Duration.ofMillis(100));
      InboxKafkaConsumer<String, byte[]> consumer = applyingPayments(builder, payments, atOnce);
      try {
        consumer.start();
        if (!progress[0].awaitDone(RUN_TIMEOUT)) {
          throw new IllegalStateException(
              "the inbox consumer did not commit all records of " + topic + " in " + RUN_TIMEOUT);
        }
      } finally {
        consumer.close();
      }
      return progress[0].seconds();
    }
  }

  /** Polls, applies each new payment of the poll in one transaction, commits, commits offsets. */
  private double runPlain(String group, boolean atOnce) throws Exception {
    Map<String, Object> properties = consumerProperties(group);
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    Set<String> seen = new HashSet<>();
    long consumed = 0;
    long total = workload.messages.size();
    long first = 0;
    long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(properties);
        Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      consumer.subscribe(List.of(topic));
      while (consumed < total) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "the plain consumer did not read all records of " + topic + " in " + RUN_TIMEOUT);
        }
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(100));
        if (records.isEmpty()) {
          continue;
        }
        if (first == 0) {
          first = System.nanoTime();
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        List<Workload.Payment> newPayments = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> record : records) {
          Workload.Payment payment = payment(record);
          if (seen.add(payment.id())) {
            if (atOnce) {
              newPayments.add(payment);
            } else {
              payments.apply(tx, payment);
            }
          }
          offsets.put(
              new TopicPartition(record.topic(), record.partition()),
              new OffsetAndMetadata(record.offset() + 1));
        }
        if (!newPayments.isEmpty()) {
          payments.applyAll(tx, newPayments);
        }
        tx.commit();
        consumer.commitSync(offsets);
        consumed += records.count();
      }
      return (System.nanoTime() - first) / 1e9;
    }
  }

  /**
   * The consumer that applies each new payment ({@code --handler per-item}), or each poll's new
   * payments in one statement ({@code at-once}).
   */
  static InboxKafkaConsumer<String, byte[]> applyingPayments(
      InboxKafkaConsumer.Builder<String, byte[]> builder, PaymentsSchema payments, boolean atOnce) {
    return (atOnce
            ? builder.newRecordsHandler((records, tx) -> payments.applyAll(tx, paymentsOf(records)))
            : builder.handler((record, tx) -> payments.apply(tx, payment(record))))
        .build();
  }

  private static List<Workload.Payment> paymentsOf(List<ConsumerRecord<String, byte[]>> records) {
    List<Workload.Payment> list = new ArrayList<>(records.size());
    for (ConsumerRecord<String, byte[]> record : records) {
      list.add(payment(record));
    }
    return list;
  }

  static Workload.Payment payment(ConsumerRecord<?, byte[]> record) {
    Header key = record.headers().lastHeader(PaymentCodec.KAFKA_HEADER);
    return PaymentCodec.payment(
        key == null ? null : new String(key.value(), StandardCharsets.UTF_8), record.value());
  }
}
