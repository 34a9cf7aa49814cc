package dev.inbox.benchmarks;

import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.kafka.InboxKafkaConsumer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The consumers of one group, 1 to N instances, against one PostgreSQL: each instance count reads
 * the workload from a fresh topic of as many partitions as the largest count, with a new group.
 * Every instance is an {@link InboxKafkaConsumer} with an {@link Inbox} of its own, in this JVM, on
 * the benchmark's pool. The instances join first; the workload is produced only once every
 * partition is assigned, so that no rebalance falls into the timed part. A count is timed from the
 * first non-empty poll of any instance to the commit that completes the topic's offsets, after
 * {@code --warmup} unmeasured runs of the first count.
 */
final class ConsumerScaling {
  private static final Duration TIMEOUT = Duration.ofMinutes(10);
  private static final String SCHEMA = ScaleScenario.SCHEMA + "_kafka";

  private final DataSource dataSource;
  private final Workload workload;
  private final boolean atOnce;
  private final boolean paymentOnly;
  private final PaymentsSchema payments = new PaymentsSchema(SCHEMA);

  /**
   * @param paymentOnly each new payment's row only ({@link PaymentsSchema#record}), so that the
   *     instances' transactions never wait for each other's business writes; else the {@code kafka}
   *     scenario's writes, whose account credits do
   */
  ConsumerScaling(DataSource dataSource, Workload workload, boolean atOnce, boolean paymentOnly) {
    this.dataSource = dataSource;
    this.workload = workload;
    this.atOnce = atOnce;
    this.paymentOnly = paymentOnly;
  }

  static boolean runAll(BenchmarkRun run) throws Exception {
    List<Integer> counts = run.options.scaleConsumers;
    int partitions = counts.stream().mapToInt(Integer::intValue).max().orElseThrow();
    ConsumerScaling scaling =
        new ConsumerScaling(
            run.dataSource,
            run.workload,
            run.options.handlerAtOnce(),
            run.options.scaleConsumersWrites.equals(InboxBenchmarks.WRITES_PAYMENT));
    boolean correct = true;
    double single = 0;
    try (BenchmarkKafka kafka = BenchmarkKafka.open(run.options.bootstrapServers)) {
      // --warmup unmeasured runs of the first count, so that it is not measured on a cold JIT.
      for (int i = 0; i < run.options.warmup; i++) {
        String topic = kafka.newTopic("bench-scale-consumers", partitions);
        try {
          correct &= scaling.run(kafka, topic, partitions, counts.get(0)).correct();
        } finally {
          kafka.deleteTopic(topic);
        }
      }
      for (int count : counts) {
        String topic = kafka.newTopic("bench-scale-consumers", partitions);
        try {
          Measurement m = scaling.run(kafka, topic, partitions, count);
          double rate = run.workload.messages.size() / m.seconds();
          if (single == 0) {
            single = rate;
          }
          correct &= m.correct();
          run.print(
              JsonLine.scenario("scale")
                  .put("variant", "consumers")
                  .put("handler", run.options.handler)
                  .put("writes", run.options.scaleConsumersWrites)
                  .put("instances", count)
                  .put("partitions", partitions)
                  .put("messages", run.workload.messages.size())
                  .put("warmup", run.options.warmup)
                  .put("seconds", m.seconds(), 3)
                  .put("msgs_per_s", rate, 0)
                  .put("ratio_vs_first", rate / single, 3)
                  .put("load_1m", ScaleScenario.loadAverage(), 2)
                  .put("correct", m.correct()));
        } finally {
          kafka.deleteTopic(topic);
        }
      }
    }
    return correct;
  }

  Measurement run(BenchmarkKafka kafka, String topic, int partitions, int instances)
      throws Exception {
    payments.reset(dataSource);
    Progress progress = new Progress(workload.messages.size(), topic, partitions);
    String group = "bench-scale-" + UUID.randomUUID();
    InboxSettings settings =
        InboxSettings.builder().schema(SCHEMA).janitorInterval(Duration.ZERO).build();
    List<Inbox> inboxes = new ArrayList<>();
    List<InboxKafkaConsumer<String, byte[]>> consumers = new ArrayList<>();
    try {
      for (int i = 0; i < instances; i++) {
        Inbox inbox =
            Inbox.builder().dataSource(dataSource).settings(settings).migrate(i == 0).build();
        inboxes.add(inbox);
        InboxKafkaConsumer.Builder<String, byte[]> builder =
            InboxKafkaConsumer.builder(new StringDeserializer(), new ByteArrayDeserializer())
                .properties(properties(kafka, group))
                .consumerFactory(properties -> new Instance(properties, progress))
                .topics(topic)
                .inbox(inbox)
                .pollTimeout(Duration.ofMillis(100));
        InboxKafkaConsumer<String, byte[]> consumer =
            paymentOnly
                ? builder
                    .handler((record, tx) -> payments.record(tx, KafkaScenario.payment(record)))
                    .build()
                : KafkaScenario.applyingPayments(builder, payments, atOnce);
        consumers.add(consumer);
        consumer.start();
      }
      if (!progress.awaitAssigned(instances, TIMEOUT)) {
        throw new IllegalStateException(
            instances + " consumers did not share the partitions of " + topic + " in " + TIMEOUT);
      }
      kafka.produce(topic, workload);
      if (!progress.awaitDone(TIMEOUT)) {
        throw new IllegalStateException(
            instances + " consumers did not commit all records of " + topic + " in " + TIMEOUT);
      }
    } finally {
      consumers.forEach(InboxKafkaConsumer::close);
      inboxes.forEach(Inbox::close);
    }
    return new Measurement(
        progress.seconds(), payments.correct(dataSource, workload, !paymentOnly));
  }

  private static Map<String, Object> properties(BenchmarkKafka kafka, String group) {
    Map<String, Object> properties = new HashMap<>();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    return properties;
  }

  /** What the instances of one count share: who holds partitions, and the topic's offsets. */
  static final class Progress {
    private final long total;
    private final String topic;
    private final int partitions;
    private final Map<Object, Integer> assigned = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicLong firstRecordNanos = new AtomicLong();
    private volatile long doneNanos;

    Progress(long total, String topic, int partitions) {
      this.total = total;
      this.topic = topic;
      this.partitions = partitions;
    }

    boolean awaitAssigned(int instances, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        // Each instance's count is as of its last poll: a sum above the partitions is a
        // rebalance that not every instance has seen the end of.
        if (assigned.size() == instances
            && assigned.values().stream().allMatch(n -> n > 0)
            && assigned.values().stream().mapToInt(Integer::intValue).sum() == partitions) {
          return true;
        }
        Thread.sleep(50);
      }
      return false;
    }

    boolean awaitDone(Duration timeout) throws InterruptedException {
      return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    double seconds() {
      return (doneNanos - firstRecordNanos.get()) / 1e9;
    }

    void polled(Object instance, int partitions, boolean records) {
      assigned.put(instance, partitions);
      if (records) {
        firstRecordNanos.compareAndSet(0, System.nanoTime());
      }
    }

    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
      offsets.forEach(
          (partition, offset) -> {
            if (partition.topic().equals(topic)) {
              committed.merge(partition, offset.offset(), Math::max);
            }
          });
      long sum = committed.values().stream().mapToLong(Long::longValue).sum();
      if (sum >= total && doneNanos == 0) {
        doneNanos = System.nanoTime();
        done.countDown();
      }
    }
  }

  /** One instance's {@link KafkaConsumer}, reporting to the shared progress from its loop. */
  static final class Instance extends KafkaConsumer<byte[], byte[]> {
    private final Progress progress;

    Instance(Map<String, Object> properties, Progress progress) {
      super(properties);
      this.progress = progress;
    }

    @Override
    public ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
      ConsumerRecords<byte[], byte[]> records = super.poll(timeout);
      progress.polled(this, assignment().size(), !records.isEmpty());
      return records;
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
      super.commitSync(offsets);
      progress.committed(offsets);
    }
  }
}
