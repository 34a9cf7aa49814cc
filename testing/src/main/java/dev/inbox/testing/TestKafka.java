package dev.inbox.testing;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.kafka.KafkaContainer;

/**
 * A Kafka broker for this test JVM.
 *
 * <p>Found in this order: the bootstrap servers in the system property {@value #PROPERTY} or the
 * environment variable {@value #ENVIRONMENT}; then a Testcontainers Kafka when Docker is available;
 * then a real one-node KRaft broker in a child JVM on Kafka's own jars ({@link KafkaBrokerJvm}),
 * which leaves this JVM's kafka-clients, whichever version the build tests, alone. Topics get
 * random names through {@link #newTopic}, so that runs never see each other's records.
 */
public final class TestKafka {
  public static final String PROPERTY = "inbox.test.bootstrap-servers";
  public static final String ENVIRONMENT = "INBOX_TEST_BOOTSTRAP_SERVERS";

  /** How long a new topic may take to be ready, on a busy machine. */
  private static final int READY_TIMEOUT_MS = 120_000;

  private static final Logger log = LoggerFactory.getLogger(TestKafka.class);
  private static volatile TestKafka shared;

  private final String bootstrapServers;

  private TestKafka(String bootstrapServers) {
    this.bootstrapServers = bootstrapServers;
  }

  /** The broker of this JVM, started on first use and stopped when the JVM exits. */
  public static TestKafka shared() {
    TestKafka kafka = shared;
    if (kafka == null) {
      synchronized (TestKafka.class) {
        kafka = shared;
        if (kafka == null) {
          kafka = start();
          shared = kafka;
        }
      }
    }
    return kafka;
  }

  private static TestKafka start() {
    String explicit = Settings.explicit(PROPERTY, ENVIRONMENT);
    if (explicit != null) {
      log.info("tests use the Kafka brokers from {}", PROPERTY);
      return new TestKafka(explicit);
    }
    if (Docker.isAvailable()) {
      KafkaContainer container = new KafkaContainer("apache/kafka:4.1.1");
      container.start();
      Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-test-kafka"));
      log.info("tests use a Testcontainers Kafka at {}", container.getBootstrapServers());
      return new TestKafka(container.getBootstrapServers());
    }
    String bootstrapServers = KafkaBrokerJvm.start();
    log.info("no Docker; tests use a KRaft broker in a child JVM at {}", bootstrapServers);
    return new TestKafka(bootstrapServers);
  }

  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** {@link #producerConfig(String)} for this broker. */
  public Map<String, Object> producerConfig() {
    return producerConfig(bootstrapServers);
  }

  /**
   * The settings of every test producer: idempotent, {@code acks=all}, and one request in flight
   * per connection. With more in flight (the client's default is five), a batch that fails with a
   * retriable error, such as NOT_LEADER_OR_FOLLOWER on a topic whose leader the broker is still
   * installing, can be overtaken by the next batch; the broker then refuses the retried batch as
   * OUT_OF_ORDER_SEQUENCE_NUMBER until the delivery timeout (KAFKA-14359). One in flight keeps the
   * retry ahead of everything after it, so the order and the sequence hold. Add serializers or
   * settings to a copy.
   */
  public static Map<String, Object> producerConfig(String bootstrapServers) {
    return Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrapServers,
        ProducerConfig.ACKS_CONFIG,
        "all",
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
        true,
        ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
        1,
        ProducerConfig.LINGER_MS_CONFIG,
        5);
  }

  /**
   * Creates a topic with a random name that starts with {@code prefix}, and returns once every
   * partition's leader answers: the broker names a leader in its metadata before the partition is
   * ready to take records, and a producer that sends in between gets NOT_LEADER_OR_FOLLOWER (which
   * {@link #producerConfig} makes harmless, but a test should not depend on a retry).
   */
  public String newTopic(String prefix, int partitions) {
    String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    try (Admin admin = Admin.create(adminConfig())) {
      try {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
      } catch (ExecutionException e) {
        // The admin client retries a request that timed out on a busy broker; if the first one
        // went through, the retry finds the topic: ours, since its name is random.
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw e;
        }
      }
      awaitPartitionLeaders(admin, name);
    } catch (ExecutionException e) {
      throw new IllegalStateException("could not create topic " + name, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topic " + name, e);
    }
    return name;
  }

  /** Generous timeouts: on a machine whose CPUs are busy, the broker answers slowly. */
  private Map<String, Object> adminConfig() {
    return Map.of(
        AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrapServers,
        AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
        60_000,
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
        READY_TIMEOUT_MS);
  }

  /**
   * Waits until the broker knows the topic and the leader of every partition answers a ListOffsets
   * request. That request is served by the partition's leader itself, which answers
   * NOT_LEADER_OR_FOLLOWER (retried by the admin client) until it has taken the partition over; the
   * topic's metadata alone can name a leader sooner.
   */
  private static void awaitPartitionLeaders(Admin admin, String topic)
      throws ExecutionException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
    while (true) {
      try {
        TopicDescription description =
            admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (TopicPartitionInfo partition : description.partitions()) {
          latest.put(new TopicPartition(topic, partition.partition()), OffsetSpec.latest());
        }
        admin.listOffsets(latest).all().get();
        return;
      } catch (ExecutionException e) {
        // Right after its creation the broker may not know the topic yet.
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
            || System.nanoTime() > deadline) {
          throw e;
        }
      }
      Thread.sleep(50);
    }
  }
}
