package dev.inbox.kafka;

import dev.inbox.Inbox;
import dev.inbox.kafka.micrometer.MicrometerKafkaConsumerListener;
import dev.inbox.kafka.spi.KafkaConsumerListener;
import dev.inbox.spi.Listeners;
import dev.inbox.spi.MessageOutcome;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A poll loop that makes every record take effect exactly once: for each poll it claims the
 * records' keys in the inbox, runs the handler for new records only, commits the database, and then
 * commits exactly the offsets of the settled records. A crash between the two commits redelivers
 * records that the inbox recognises as duplicates.
 *
 * <p>A failing record is retried with backoff by seeking and pausing its partition only, so that
 * the loop keeps polling within {@code max.poll.interval.ms}. After the inbox's {@code
 * maxAttempts}, and at once for records that cannot be deserialized (whatever the deserializer
 * throws, an {@link Error} included), have no valid key, or whose handler threw {@link
 * dev.inbox.NonRetryableException}, the record goes to the dead-letter topic (see {@link
 * KafkaDeadLetterPublisher}); {@link dev.inbox.Disposition} decides which. A dead letter that
 * cannot be published leaves its record uncommitted: it is logged at ERROR, counted ({@code
 * outcome=dead_letter_failed}) and tried again after a pause, so a partition never moves past a
 * record that was neither handled nor dead-lettered.
 *
 * <p>Each record's raw value is fingerprinted (SHA-256, tagged as a message fingerprint; a null
 * value, a tombstone, has a fingerprint of its own, unlike an empty value's), so that a key re-sent
 * with a different value is dead-lettered as {@link dev.inbox.DeadLetterReason#MISMATCH} instead of
 * committed as a duplicate ({@link Builder#fingerprintPayloads} turns this off). A handler that
 * throws an {@link Error} fails the attempt like any exception.
 *
 * <p>One thread owns the {@code KafkaConsumer}, as in reactor-kafka's {@code ConsumerEventLoop}:
 * the loop's thread ({@link #start()}'s {@code inbox-kafka}, or the caller of {@link #run()}) makes
 * every call on it, polls, commits, seeks, pauses, resumes and the close (made by {@link
 * #close()}'s caller only for a loop that never ran), and keeps the retry state unshared. Another
 * thread only calls {@code wakeup()}, the client's one thread-safe method, from {@link #close()}.
 * The dead-letter producer, which is thread-safe, is also used from the loop's thread only.
 *
 * <p>Should the loop meet anything it cannot handle (an unexpected exception from {@code poll}, an
 * {@link Error} from a key extractor), it stops visibly: it closes the consumer, which leaves the
 * group so that its partitions go to other members (a static member, with {@code
 * group.instance.id}, too), logs at ERROR, reports {@link #isRunning()} false and the cause in
 * {@link #failure()}, and calls {@link Builder#onFailure}. {@link #close()} keeps Kafka's default:
 * a static member stays in the group until its session times out, so that a restart within it gets
 * its partitions back without a rebalance.
 *
 * <pre>{@code
 * InboxKafkaConsumer<String, String> consumer =
 *     InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
 *         .properties(Map.of("bootstrap.servers", "localhost:9092", "group.id", "payments"))
 *         .topics("payments")
 *         .inbox(inbox)
 *         .handler((record, tx) -> applyPayment(record.value(), tx))
 *         .build();
 * consumer.start();
 * Runtime.getRuntime().addShutdownHook(new Thread(consumer::close));
 * }</pre>
 */
public final class InboxKafkaConsumer<K, V> implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(InboxKafkaConsumer.class);

  private final Consumer<byte[], byte[]> consumer;
  private final ConsumerCloser closer;
  private final Producer<byte[], byte[]> ownedProducer;
  private final Collection<String> topics;
  private final Pattern topicPattern;
  private final InboxRecordProcessor<byte[], byte[]> processor;
  private final TypedRecords<K, V> typed;
  private final KafkaConsumerListener listener;
  private final KafkaClientMetrics clientMetrics;
  private final Duration pollTimeout;
  private final Backoff databaseBackoff;
  private final Duration closeTimeout;
  private final java.util.function.Consumer<Throwable> onFailure;

  /** Partitions paused for a retry, and when to resume them (System.nanoTime). */
  private final Map<TopicPartition, Long> pausedUntil = new HashMap<>();

  private final CountDownLatch stopped = new CountDownLatch(1);
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile boolean running;
  private volatile boolean closing;
  private volatile Thread loopThread;
  private int databaseFailures;

  private InboxKafkaConsumer(Builder<K, V> builder) {
    Map<String, Object> properties = consumerProperties(builder.properties);
    String groupId = (String) properties.get(ConsumerConfig.GROUP_ID_CONFIG);
    String scope = builder.scope != null ? builder.scope : groupId;
    if (scope == null) {
      throw new IllegalArgumentException(
          "set a scope, or a group.id in the consumer properties to serve as the scope");
    }
    this.consumer = builder.consumerFactory.apply(properties);
    this.closer = new ConsumerCloser(properties);
    this.topics = builder.topics;
    this.topicPattern =
        builder.topicPattern != null && builder.defaultDeadLetterTopic
            ? withoutDeadLetterTopics(builder.topicPattern)
            : builder.topicPattern;
    this.typed = new TypedRecords<>(builder.keyDeserializer, builder.valueDeserializer);
    this.listener = Listeners.nonThrowing(KafkaConsumerListener.class, builder.listener);
    if (builder.clientMetricsRegistry != null) {
      this.clientMetrics = new KafkaClientMetrics(consumer);
      clientMetrics.bindTo(builder.clientMetricsRegistry);
    } else {
      this.clientMetrics = null;
    }
    Producer<byte[], byte[]> producer = builder.deadLetterProducer;
    this.ownedProducer =
        producer == null
            ? new KafkaProducer<>(
                deadLetterProducerConfig(properties, builder.deadLetterProducerProperties))
            : null;
    DeadLetterSink<byte[], byte[]> deadLetters =
        new KafkaDeadLetterPublisher(
            producer != null ? producer : ownedProducer,
            topicPattern != null
                ? new DeadLetterTopics(topicPattern, builder.deadLetterTopic)
                : builder.deadLetterTopic,
            Duration.ofSeconds(30));
    KeyExtractor<K, V> keys = builder.keyExtractor;
    RecordHandler<K, V> handler = builder.handler;
    NewRecordsHandler<K, V> newRecordsHandler = builder.newRecordsHandler;
    this.processor =
        new InboxRecordProcessor<>(
            builder.inbox,
            scope,
            // Deserializing before the claim sends a poison record to the DLT without retries.
            raw -> keys.keyOf(typed.of(raw)),
            // The bytes as read, before the user's deserializer: a re-serialization could differ.
            builder.fingerprintPayloads ? InboxRecordProcessor::bytesFingerprint : null,
            handler == null ? null : (raw, tx) -> handler.handle(typed.of(raw), tx),
            newRecordsHandler == null
                ? null
                : (raws, tx) -> newRecordsHandler.handle(typed.of(raws), tx),
            deadLetters,
            builder.retryBackoff,
            listener);
    this.pollTimeout = builder.pollTimeout;
    this.databaseBackoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(5));
    this.closeTimeout = builder.closeTimeout;
    this.onFailure = builder.onFailure;
  }

  public static <K, V> Builder<K, V> builder(
      Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
    return new Builder<>(keyDeserializer, valueDeserializer);
  }

  private static Map<String, Object> consumerProperties(Map<String, Object> given) {
    Map<String, Object> properties = new HashMap<>(given);
    Object autoCommit = properties.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
    if (autoCommit != null && Boolean.parseBoolean(autoCommit.toString())) {
      log.warn(
          "enable.auto.commit=true is ignored: offsets are committed only after the database, so"
              + " that they never run ahead of committed work");
    }
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // The loop reads bytes and deserializes itself, so that a poison record can be dead-lettered.
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return properties;
  }

  /**
   * Consumer settings that a producer must not get: those only a consumer knows, and the few that
   * both know but that mean another thing, or another client, for the producer.
   */
  private static final Set<String> NOT_FOR_THE_PRODUCER = notForTheProducer();

  private static Set<String> notForTheProducer() {
    Set<String> keys = new HashSet<>(ConsumerConfig.configNames());
    keys.removeAll(ProducerConfig.configNames());
    keys.add(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG); // consumer interceptors, not producer ones
    keys.add(ProducerConfig.CLIENT_ID_CONFIG); // given its own below
    keys.add(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
    return Set.copyOf(keys);
  }

  /**
   * The dead-letter producer's settings: every setting of the consumer that a producer knows or
   * that no consumer knows (connection, security, SASL and SSL, DNS, a plug-in's own keys), so that
   * the producer reaches the cluster the way the consumer does; then {@code acks=all} and
   * idempotence; then the user's {@code overrides}; and byte-array serializers whatever they say.
   */
  static Map<String, Object> deadLetterProducerConfig(
      Map<String, Object> consumer, Map<String, Object> overrides) {
    Map<String, Object> properties = new HashMap<>();
    consumer.forEach(
        (key, value) -> {
          if (!NOT_FOR_THE_PRODUCER.contains(key)) {
            properties.put(key, value);
          }
        });
    Object clientId = consumer.get(ConsumerConfig.CLIENT_ID_CONFIG);
    if (clientId != null && !clientId.toString().isEmpty()) {
      properties.put(ProducerConfig.CLIENT_ID_CONFIG, clientId + "-dlt");
    }
    properties.put(ProducerConfig.ACKS_CONFIG, "all");
    properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    properties.putAll(overrides);
    properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return properties;
  }

  /**
   * Runs the loop on a new thread named {@code inbox-kafka}; should it stop on a failure, see
   * {@link #failure()}.
   */
  public InboxKafkaConsumer<K, V> start() {
    Thread thread = new Thread(this::loop, "inbox-kafka");
    loopThread = thread;
    running = true;
    thread.start();
    return this;
  }

  /**
   * Runs the loop on this thread until {@link #close()}, or until a failure it cannot handle, which
   * it throws once the consumer is closed (see {@link InboxKafkaConsumer}).
   */
  public void run() {
    Throwable failed = loop();
    if (failed instanceof RuntimeException e) {
      throw e;
    }
    if (failed instanceof Error e) {
      throw e;
    }
    if (failed != null) {
      throw new IllegalStateException(failed);
    }
  }

  /** Whether the loop runs: started, and neither closed nor stopped on a failure. */
  public boolean isRunning() {
    return running;
  }

  /** What stopped the loop, if it stopped on a failure rather than by {@link #close()}. */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure.get());
  }

  /** The loop; returns the failure that stopped it, or null when it was closed. */
  private Throwable loop() {
    loopThread = Thread.currentThread();
    running = true;
    Throwable failed = null;
    try {
      subscribe();
      while (!closing) {
        resumeDuePartitions();
        ConsumerRecords<byte[], byte[]> records;
        try {
          records = consumer.poll(nextPollTimeout());
        } catch (WakeupException e) {
          continue; // close() woke us; the loop condition decides
        }
        if (!records.isEmpty()) {
          processBatch(records);
        }
      }
    } catch (Throwable e) {
      failed = e;
    } finally {
      shutdown(failed);
    }
    return failed;
  }

  /**
   * The pattern, except for the names it matches followed by {@code .DLT}: a pattern such as {@code
   * payments.*} matches its own dead-letter topics, whose letters it would dead-letter again, to
   * {@code payments.DLT.DLT} and on, one new topic at a time.
   */
  static Pattern withoutDeadLetterTopics(Pattern pattern) {
    String subscribed = "(?:" + pattern.pattern() + ")";
    return Pattern.compile(
        "(?!"
            + subscribed
            + Pattern.quote(KafkaDeadLetterPublisher.defaultTopic(""))
            + "$)"
            + subscribed,
        pattern.flags());
  }

  private void subscribe() {
    ConsumerRebalanceListener listener = new RetryStateCleaner();
    if (topicPattern != null) {
      consumer.subscribe(topicPattern, listener);
    } else {
      consumer.subscribe(topics, listener);
    }
  }

  /**
   * Processes a poll partition by partition, then commits the offsets of what was settled. Nothing
   * is in flight between two polls, so a rebalance (which runs inside poll) never finds uncommitted
   * work.
   */
  private void processBatch(ConsumerRecords<byte[], byte[]> records) {
    long start = System.nanoTime();
    typed.clear();
    Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
    boolean databaseFailed = false;
    for (TopicPartition partition : records.partitions()) {
      List<ConsumerRecord<byte[], byte[]>> partitionRecords = records.records(partition);
      try {
        PartitionResult result = processor.processPartition(partition, partitionRecords);
        if (result.commit() != null) {
          offsets.put(partition, result.commit());
        }
        if (result.needsRetry()) {
          retryLater(partition, result.retryOffset(), result.retryAfter());
        }
      } catch (DeadLetterNotPublishedException e) {
        databaseFailed = true;
        Duration pause = databaseBackoff.after(databaseFailures + 1);
        log.error("{}; reading it again in {} ms", e.getMessage(), pause.toMillis(), e);
        listener.records(partition.topic(), MessageOutcome.DEAD_LETTER_FAILED, 1);
        retryLater(partition, partitionRecords.get(0).offset(), pause);
      } catch (Exception e) {
        // The partition's transaction rolled back: read the same records again after a pause;
        // their offsets are not committed.
        databaseFailed = true;
        Duration pause = databaseBackoff.after(databaseFailures + 1);
        log.warn("processing {} failed; reading it again in {} ms", partition, pause.toMillis(), e);
        retryLater(partition, partitionRecords.get(0).offset(), pause);
      }
    }
    databaseFailures = databaseFailed ? databaseFailures + 1 : 0;
    commit(offsets);
    listener.batch(Duration.ofNanos(System.nanoTime() - start));
  }

  private void retryLater(TopicPartition partition, long offset, Duration delay) {
    consumer.seek(partition, offset);
    if (!delay.isZero()) {
      consumer.pause(List.of(partition));
      pausedUntil.put(partition, System.nanoTime() + delay.toNanos());
    }
  }

  private void resumeDuePartitions() {
    long now = System.nanoTime();
    List<TopicPartition> due = new ArrayList<>();
    for (Iterator<Map.Entry<TopicPartition, Long>> it = pausedUntil.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<TopicPartition, Long> entry = it.next();
      if (entry.getValue() - now <= 0) {
        due.add(entry.getKey());
        it.remove();
      }
    }
    due.retainAll(consumer.assignment());
    if (!due.isEmpty()) {
      consumer.resume(due);
    }
  }

  private Duration nextPollTimeout() {
    long now = System.nanoTime();
    long timeout = pollTimeout.toNanos();
    for (long until : pausedUntil.values()) {
      timeout = Math.min(timeout, Math.max(0, until - now));
    }
    return Duration.ofNanos(timeout);
  }

  /**
   * Commits the offsets after the database. A failed commit only causes a redelivery, which the
   * inbox recognises as duplicates, so it is logged and the loop goes on.
   */
  private void commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
    if (offsets.isEmpty()) {
      return;
    }
    for (int attempt = 1; ; attempt++) {
      try {
        consumer.commitSync(offsets);
        return;
      } catch (WakeupException e) {
        // close() asked us to stop; the wakeup is consumed, so commit again before stopping.
        if (attempt >= 3) {
          log.warn("offsets {} not committed after repeated wakeups", offsets);
          return;
        }
      } catch (CommitFailedException | RebalanceInProgressException e) {
        log.info(
            "offsets {} not committed ({}); their records will be redelivered as duplicates",
            offsets,
            e.getMessage());
        return;
      } catch (org.apache.kafka.common.errors.TimeoutException e) {
        if (attempt >= 3) {
          log.warn("offsets {} not committed; they will be redelivered as duplicates", offsets, e);
          return;
        }
      } catch (KafkaException e) {
        log.warn("offsets {} not committed; they will be redelivered as duplicates", offsets, e);
        return;
      }
    }
  }

  /** Closes the clients, then reports a failure, if any. */
  private void shutdown(Throwable failed) {
    try {
      if (clientMetrics != null) {
        clientMetrics.close();
      }
      // A loop stopped on a failure does not come back: even a static member leaves its group now,
      // instead of holding its partitions until its session times out.
      closer.close(consumer, Duration.ofSeconds(10), failed != null);
    } catch (RuntimeException e) {
      log.warn("closing the Kafka consumer failed", e);
    }
    try {
      if (ownedProducer != null) {
        ownedProducer.close(Duration.ofSeconds(10));
      }
    } catch (RuntimeException e) {
      log.warn("closing the dead-letter producer failed", e);
    }
    if (failed != null) {
      failure.set(failed);
    }
    running = false;
    try {
      if (failed != null) {
        log.error(
            "the Kafka loop stopped on an unexpected failure; the consumer has left its group, so"
                + " that other members take over its partitions",
            failed);
        onFailure.accept(failed);
      }
    } catch (RuntimeException e) {
      log.error("the onFailure callback threw", e);
    } finally {
      stopped.countDown();
    }
  }

  /**
   * Stops the loop: the batch in progress finishes and commits, then the consumer closes with
   * Kafka's default: a dynamic member leaves its group, a static one ({@code group.instance.id})
   * keeps its partitions until its session times out, for a restart to take them back. Safe to call
   * from any thread, a shutdown hook included, and more than once.
   */
  @Override
  public void close() {
    closing = true;
    Thread loop = loopThread;
    if (loop == null) {
      // Never ran: there is no loop to wait for.
      if (stopped.getCount() > 0) {
        shutdown(null);
      }
      return;
    }
    if (stopped.getCount() == 0) {
      return; // stopped already: on a failure, or by an earlier close
    }
    consumer.wakeup();
    if (loop != Thread.currentThread()) {
      try {
        if (!stopped.await(closeTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
          log.warn("the Kafka loop did not stop within {}", closeTimeout);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Forgets the retry state of partitions that leave this consumer. */
  private final class RetryStateCleaner implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      // Every batch is committed before the next poll, so nothing processed is uncommitted here.
      partitions.forEach(pausedUntil::remove);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      partitions.forEach(pausedUntil::remove);
    }
  }

  /**
   * Configures an {@link InboxKafkaConsumer}; inbox, topics and one handler ({@link #handler} or
   * {@link #newRecordsHandler}) are required.
   */
  public static final class Builder<K, V> {
    private final Deserializer<K> keyDeserializer;
    private final Deserializer<V> valueDeserializer;
    private Map<String, Object> properties = Map.of();
    private Function<Map<String, Object>, Consumer<byte[], byte[]>> consumerFactory =
        KafkaConsumer::new;
    private Collection<String> topics;
    private Pattern topicPattern;
    private Inbox inbox;
    private String scope;
    private KeyExtractor<K, V> keyExtractor = KeyExtractor.headerOrCoordinates();
    private RecordHandler<K, V> handler;
    private NewRecordsHandler<K, V> newRecordsHandler;
    private Function<String, String> deadLetterTopic = KafkaDeadLetterPublisher::defaultTopic;
    private boolean defaultDeadLetterTopic = true;
    private Producer<byte[], byte[]> deadLetterProducer;
    private Map<String, Object> deadLetterProducerProperties = Map.of();
    private boolean fingerprintPayloads = true;
    private java.util.function.Consumer<Throwable> onFailure = failure -> {};
    private Backoff retryBackoff = Backoff.DEFAULT;
    private Duration pollTimeout = Duration.ofMillis(500);
    private Duration closeTimeout = Duration.ofSeconds(30);
    private KafkaConsumerListener listener = KafkaConsumerListener.NOOP;

    /** Where Kafka's own client metrics go, or null. */
    private MeterRegistry clientMetricsRegistry;

    private Builder(Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
      this.keyDeserializer = Objects.requireNonNull(keyDeserializer, "keyDeserializer");
      this.valueDeserializer = Objects.requireNonNull(valueDeserializer, "valueDeserializer");
    }

    /**
     * The consumer's properties: at least {@code bootstrap.servers} and {@code group.id}. {@code
     * enable.auto.commit} is forced off and the deserializers are replaced by byte arrays.
     */
    public Builder<K, V> properties(Map<String, ?> properties) {
      this.properties = Map.copyOf(properties);
      return this;
    }

    /** Creates the consumer from the adjusted properties; defaults to {@link KafkaConsumer}. */
    public Builder<K, V> consumerFactory(
        Function<Map<String, Object>, Consumer<byte[], byte[]>> consumerFactory) {
      this.consumerFactory = Objects.requireNonNull(consumerFactory, "consumerFactory");
      return this;
    }

    public Builder<K, V> topics(String... topics) {
      this.topics = List.of(topics);
      this.topicPattern = null;
      return this;
    }

    /**
     * Subscribes to every topic the pattern matches, except, with the default {@link
     * #deadLetterTopic} naming, the dead-letter topics of those ({@code <topic>.DLT}). With a
     * naming of your own, a dead-letter topic the pattern matches is refused (see {@link
     * #deadLetterTopic}).
     */
    public Builder<K, V> topicPattern(Pattern pattern) {
      this.topicPattern = Objects.requireNonNull(pattern, "pattern");
      this.topics = null;
      return this;
    }

    public Builder<K, V> inbox(Inbox inbox) {
      this.inbox = Objects.requireNonNull(inbox, "inbox");
      return this;
    }

    /** Whose keys these are; defaults to the {@code group.id}. */
    public Builder<K, V> scope(String scope) {
      this.scope = scope;
      return this;
    }

    /** Defaults to {@link KeyExtractor#headerOrCoordinates()}. */
    public Builder<K, V> keyExtractor(KeyExtractor<K, V> keyExtractor) {
      this.keyExtractor = Objects.requireNonNull(keyExtractor, "keyExtractor");
      return this;
    }

    /** The work done once per new record; set this or {@link #newRecordsHandler}. */
    public Builder<K, V> handler(RecordHandler<K, V> handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * The work done once per partition of a poll for all of its new records together, for set-based
     * writes; set this or {@link #handler}.
     */
    public Builder<K, V> newRecordsHandler(NewRecordsHandler<K, V> handler) {
      this.newRecordsHandler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * Names the dead-letter topic of a topic; defaults to {@code <topic>.DLT}. With the default, a
     * {@link #topicPattern} never subscribes to the dead-letter topics of what it matches. With a
     * naming of your own, the pattern must not match the names it makes: a dead letter to such a
     * topic is refused (the consumer would read its own dead letters back), its record stays
     * uncommitted and its partition is read again after a pause, with an error naming the topic and
     * the pattern, until the naming or the pattern is changed. {@link #build} refuses {@link
     * #topics} that list the dead-letter topic of another.
     */
    public Builder<K, V> deadLetterTopic(Function<String, String> naming) {
      this.deadLetterTopic = Objects.requireNonNull(naming, "naming");
      this.defaultDeadLetterTopic = false;
      return this;
    }

    /**
     * The producer for dead letters, instead of the default one. The default one is created with
     * every setting of the consumer that a producer can use (bootstrap servers, security protocol,
     * SASL, SSL, DNS lookup, timeouts, a plug-in's own keys, but no deserializer, group setting or
     * consumer interceptor), {@code acks=all} and idempotence, then {@link
     * #deadLetterProducerProperties}; it is closed with the loop.
     */
    public Builder<K, V> deadLetterProducer(Producer<byte[], byte[]> producer) {
      this.deadLetterProducer = Objects.requireNonNull(producer, "producer");
      return this;
    }

    /**
     * Settings for the default dead-letter producer, over those it takes from the consumer: for
     * example another cluster's {@code bootstrap.servers} and credentials. The serializers are
     * always byte arrays.
     */
    public Builder<K, V> deadLetterProducerProperties(Map<String, ?> properties) {
      this.deadLetterProducerProperties = Map.copyOf(properties);
      return this;
    }

    /**
     * Whether to fingerprint each record's raw value, so that a key re-sent with a different value
     * is dead-lettered as {@link dev.inbox.DeadLetterReason#MISMATCH} instead of committed as a
     * duplicate. Defaults to true; turn it off only when a re-send may legitimately carry different
     * bytes.
     */
    public Builder<K, V> fingerprintPayloads(boolean fingerprintPayloads) {
      this.fingerprintPayloads = fingerprintPayloads;
      return this;
    }

    /**
     * Called once, on the loop's thread, when the loop stops on a failure it cannot handle (see
     * {@link InboxKafkaConsumer}); the consumer has then been closed and has left its group.
     */
    public Builder<K, V> onFailure(java.util.function.Consumer<Throwable> onFailure) {
      this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
      return this;
    }

    /** The pause after a failed attempt: doubling from {@code initial} up to {@code max}. */
    public Builder<K, V> retryBackoff(Duration initial, Duration max) {
      this.retryBackoff = new Backoff(initial, max);
      return this;
    }

    public Builder<K, V> pollTimeout(Duration pollTimeout) {
      if (pollTimeout.isNegative() || pollTimeout.isZero()) {
        throw new IllegalArgumentException("pollTimeout must be positive, got " + pollTimeout);
      }
      this.pollTimeout = pollTimeout;
      return this;
    }

    /** How long {@link #close()} waits for the batch in progress; defaults to 30 s. */
    public Builder<K, V> closeTimeout(Duration closeTimeout) {
      this.closeTimeout = Objects.requireNonNull(closeTimeout, "closeTimeout");
      return this;
    }

    /**
     * Receives each record's outcome and each poll's latency, for metrics. Defaults to a no-op. An
     * exception it throws is logged and ignored: it never stops the loop.
     */
    public Builder<K, V> listener(KafkaConsumerListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener must not be null");
      return this;
    }

    /**
     * Publishes the adapter's meters ({@code inbox.kafka.*}, see {@link
     * MicrometerKafkaConsumerListener}) and Kafka's client metrics to this registry. Replaces any
     * {@link #listener}.
     */
    public Builder<K, V> meterRegistry(MeterRegistry registry) {
      this.clientMetricsRegistry =
          Objects.requireNonNull(registry, "meterRegistry must not be null");
      return listener(new MicrometerKafkaConsumerListener(registry));
    }

    public InboxKafkaConsumer<K, V> build() {
      Objects.requireNonNull(inbox, "inbox is required");
      if ((handler == null) == (newRecordsHandler == null)) {
        throw new IllegalArgumentException(
            handler == null
                ? "a handler is required: set handler(...) or newRecordsHandler(...)"
                : "set handler(...) or newRecordsHandler(...), not both");
      }
      if (topics == null && topicPattern == null) {
        throw new IllegalArgumentException("set topics(...) or topicPattern(...)");
      }
      if (topics != null && topics.isEmpty()) {
        throw new IllegalArgumentException("topics(...) needs at least one topic");
      }
      if (topics != null) {
        for (String topic : topics) {
          String destination = deadLetterTopic.apply(topic);
          if (topics.contains(destination)) {
            throw new IllegalArgumentException(
                "topics(...) lists '"
                    + destination
                    + "', the dead-letter topic of '"
                    + topic
                    + "', so this consumer would read its own dead letters back; consume it with"
                    + " a consumer of its own, or name the dead-letter topics otherwise");
          }
        }
      }
      if (!properties.containsKey(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
        throw new IllegalArgumentException("the consumer properties need bootstrap.servers");
      }
      return new InboxKafkaConsumer<>(this);
    }
  }
}
