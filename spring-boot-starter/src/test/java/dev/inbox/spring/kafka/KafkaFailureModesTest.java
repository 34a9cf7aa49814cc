package dev.inbox.spring.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestKafka;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ContainerPostProcessor;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.backoff.FixedBackOff;

/**
 * Failure modes of Kafka listeners around the inbox's transaction, each of which once lost a record
 * (its key committed, or its offset committed, while its effect did not): a batch listener whose
 * exception wraps a {@code BatchListenerFailedException} (Spring Kafka finds it in the cause
 * chain), a listener that negatively acknowledges ({@code Acknowledgment.nack}), and a listener
 * that acknowledges before its transaction's commit fails.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      KafkaFailureModesTest.Listeners.class,
      KafkaFailureModesTest.ErrorHandling.class
    },
    properties = {
      "inbox.schema=boot_kafka_modes",
      "inbox.max-attempts=3",
      "spring.kafka.consumer.auto-offset-reset=earliest"
    })
class KafkaFailureModesTest {
  private static final TestKafka KAFKA = TestKafka.shared();
  private static final String DEAD_LETTERS = KAFKA.newTopic("modes-dlt", 1);
  private static final String WRAPPED = KAFKA.newTopic("modes-wrapped", 1);
  private static final String NACK = KAFKA.newTopic("modes-nack", 1);
  private static final String BATCH_NACK = KAFKA.newTopic("modes-batch-nack", 1);
  private static final String ACK_THEN_ABORT = KAFKA.newTopic("modes-ack-then-abort", 1);

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    registry.add("spring.kafka.bootstrap-servers", KAFKA::bootstrapServers);
    registry.add("test.topic.wrapped", () -> WRAPPED);
    registry.add("test.topic.nack", () -> NACK);
    registry.add("test.topic.batch-nack", () -> BATCH_NACK);
    registry.add("test.topic.ack-then-abort", () -> ACK_THEN_ABORT);
  }

  @Configuration(proxyBeanMethods = false)
  static class ErrorHandling {
    @Bean
    DeadLetterPublishingRecoverer deadLetters(KafkaTemplate<Object, Object> template) {
      return new DeadLetterPublishingRecoverer(
          template, (record, failure) -> new TopicPartition(DEAD_LETTERS, 0));
    }

    @Bean
    DefaultErrorHandler errorHandler(DeadLetterPublishingRecoverer deadLetters) {
      return new DefaultErrorHandler(deadLetters, new FixedBackOff(0L, 9L));
    }

    @Bean
    ContainerPostProcessor<Object, Object, AbstractMessageListenerContainer<Object, Object>>
        manualAck() {
      return container -> container.getContainerProperties().setAckMode(AckMode.MANUAL);
    }

    @Bean
    ContainerPostProcessor<Object, Object, AbstractMessageListenerContainer<Object, Object>>
        manualImmediateAck() {
      return container -> container.getContainerProperties().setAckMode(AckMode.MANUAL_IMMEDIATE);
    }
  }

  @Component
  public static class Listeners {
    final JdbcTemplate jdbc;
    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    final Set<String> nacked = ConcurrentHashMap.newKeySet();
    final Set<String> aborted = ConcurrentHashMap.newKeySet();
    final CountDownLatch retryMayRun = new CountDownLatch(1);

    public Listeners(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_kafka_modes");
      jdbc.execute("CREATE TABLE IF NOT EXISTS boot_kafka_modes.effects (listener text, key text)");
    }

    /**
     * Writes an effect per payload, then names its poison payload with a {@code
     * BatchListenerFailedException} that a wrapper carries as its cause (an aspect translating
     * exceptions, a {@code CompletionException} from a future): Spring Kafka searches the cause
     * chain for it.
     */
    @Transactional
    @KafkaListener(
        id = "modes-wrapped",
        topics = "${test.topic.wrapped}",
        groupId = "modes-wrapped",
        batch = "true",
        autoStartup = "false")
    public void onWrapped(List<String> payloads) {
      call("wrapped");
      for (String payload : payloads) {
        effect("wrapped", payload);
      }
      for (int i = 0; i < payloads.size(); i++) {
        if (payloads.get(i).startsWith("poison-")) {
          throw new IllegalStateException(
              "booking failed", new BatchListenerFailedException("payload " + i + " is poison", i));
        }
      }
    }

    /** Asks, once per record, for the record to be delivered again, without any effect. */
    @Transactional
    @KafkaListener(
        topics = "${test.topic.nack}",
        groupId = "modes-nack",
        containerPostProcessor = "manualAck")
    public void onNack(String payload, Acknowledgment ack) {
      call("nack");
      if (nacked.add(payload)) {
        ack.nack(Duration.ZERO);
        return;
      }
      effect("nack", payload);
      ack.acknowledge();
    }

    /**
     * On its first batch: books the first record, then asks for the rest to be delivered again
     * ({@code nack(1, ...)}: Spring Kafka commits the records before index 1). Later batches: books
     * every record and acknowledges.
     */
    @Transactional
    @KafkaListener(
        id = "modes-batch-nack",
        topics = "${test.topic.batch-nack}",
        groupId = "modes-batch-nack",
        batch = "true",
        autoStartup = "false",
        containerPostProcessor = "manualAck")
    public void onBatchNack(List<String> payloads, Acknowledgment ack) {
      if (call("batch-nack") == 1 && payloads.size() > 1) {
        effect("batch-nack", payloads.get(0));
        ack.nack(1, Duration.ZERO);
        return;
      }
      for (String payload : payloads) {
        effect("batch-nack", payload);
      }
      ack.acknowledge();
    }

    /**
     * Books, acknowledges (MANUAL_IMMEDIATE: the offset is committed at once), then, on the first
     * call of a record, swallows an SQL error that aborted its transaction: the inbox refuses the
     * commit, so the booking rolls back. The record's next call waits until the test has looked at
     * the group's committed offset.
     */
    @Transactional
    @KafkaListener(
        topics = "${test.topic.ack-then-abort}",
        groupId = "modes-ack-then-abort",
        containerPostProcessor = "manualImmediateAck")
    public void onAckThenAbort(String payload, Acknowledgment ack) throws InterruptedException {
      call("ack-then-abort");
      boolean first = aborted.add(payload);
      if (!first) {
        retryMayRun.await(60, TimeUnit.SECONDS);
      }
      effect("ack-then-abort", payload);
      ack.acknowledge();
      if (first) {
        try {
          jdbc.queryForObject("SELECT 1 / 0", Integer.class);
        } catch (DataAccessException swallowed) {
          // the transaction is aborted now
        }
      }
    }

    private void effect(String listener, String payload) {
      jdbc.update(
          "INSERT INTO boot_kafka_modes.effects (listener, key) VALUES (?, ?)", listener, payload);
    }

    private int call(String listener) {
      return calls.computeIfAbsent(listener, l -> new AtomicInteger()).incrementAndGet();
    }

    int calls(String listener) {
      AtomicInteger count = calls.get(listener);
      return count == null ? 0 : count.get();
    }

    /** A method, not the field: the test sees this bean through its transactional proxy. */
    public void releaseRetry() {
      retryMayRun.countDown();
    }
  }

  @Autowired KafkaTemplate<String, String> kafka;
  @Autowired Listeners listeners;
  @Autowired JdbcTemplate jdbc;
  @Autowired KafkaListenerEndpointRegistry registry;

  /**
   * Spring Kafka finds a {@code BatchListenerFailedException} anywhere in the cause chain and
   * commits the records before the one it names: the record before the poison rolled back with the
   * listener's transaction, so it must be delivered again, not committed.
   */
  @Test
  void a_batch_listener_failure_wrapping_a_named_record_loses_none_before_it() throws Exception {
    MessageListenerContainer container = registry.getListenerContainer("modes-wrapped");
    String before = UUID.randomUUID().toString();
    String poison = UUID.randomUUID().toString();
    String after = UUID.randomUUID().toString();
    send(WRAPPED, before, before);
    send(WRAPPED, poison, "poison-" + poison);
    send(WRAPPED, after, after);
    container.start();
    try {
      List<ConsumerRecord<String, String>> dead = deadLettersUpTo(WRAPPED, poison);
      awaitCommitted("modes-wrapped", WRAPPED, 3);
      assertThat(dead).extracting(ConsumerRecord::key).containsExactly(poison);
      assertThat(effects("wrapped", before)).as("effects of the record before").isEqualTo(1);
      assertThat(effects("wrapped", after)).as("effects of the record after").isEqualTo(1);
      assertThat(effects("wrapped", "poison-" + poison)).isZero();
    } finally {
      container.stop();
    }
  }

  /** A nacked record is delivered again: its key must not have committed with the nack. */
  @Test
  void a_nacked_record_is_delivered_again_and_takes_effect_once() throws Exception {
    String key = UUID.randomUUID().toString();
    send(NACK, key, key);
    awaitCommitted("modes-nack", NACK, 1);
    assertThat(listeners.calls("nack")).as("calls").isEqualTo(2);
    assertThat(effects("nack", key)).isEqualTo(1);
  }

  /**
   * A batch listener that nacks at index 1 has booked record 0 only; Spring Kafka commits record 0
   * and delivers the rest again, so their keys must not have committed with the first batch.
   */
  @Test
  void a_batch_nack_delivers_again_every_record_not_booked_and_each_takes_effect_once()
      throws Exception {
    MessageListenerContainer container = registry.getListenerContainer("modes-batch-nack");
    List<String> keys = List.of(uuid(), uuid(), uuid());
    for (String key : keys) {
      send(BATCH_NACK, key, key);
    }
    container.start();
    try {
      awaitCommitted("modes-batch-nack", BATCH_NACK, 3);
      for (String key : keys) {
        assertThat(effects("batch-nack", key)).as("effects of %s", key).isEqualTo(1);
      }
    } finally {
      container.stop();
    }
  }

  /**
   * The listener acknowledged, then its transaction failed to commit: the record's offset must not
   * be committed while its effect is rolled back, or a restart or rebalance at that moment (here:
   * before the error handler's retry runs) loses it.
   */
  @Test
  void an_acknowledgement_does_not_commit_the_offset_of_a_record_whose_transaction_rolled_back()
      throws Exception {
    String key = UUID.randomUUID().toString();
    send(ACK_THEN_ABORT, key, key);
    Await.until(
        "the retry of the rolled back record",
        Duration.ofSeconds(60),
        () -> listeners.calls("ack-then-abort") >= 2);
    long committed = committed("modes-ack-then-abort", ACK_THEN_ABORT);
    int effects = effects("ack-then-abort", key);
    listeners.releaseRetry();
    assertThat(effects).as("effects while the retry waits").isZero();
    assertThat(committed).as("offset committed while the effect is rolled back").isZero();
    awaitCommitted("modes-ack-then-abort", ACK_THEN_ABORT, 1);
    assertThat(effects("ack-then-abort", key)).isEqualTo(1);
  }

  private static String uuid() {
    return UUID.randomUUID().toString();
  }

  private void send(String topic, String key, String value) throws Exception {
    KafkaChecks.send(kafka, topic, null, key, value);
  }

  private int effects(String listener, String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_kafka_modes.effects WHERE listener = ? AND key = ?",
        Integer.class,
        listener,
        key);
  }

  private static long committed(String group, String topic) throws Exception {
    return KafkaChecks.committed(KAFKA, group, topic);
  }

  private static void awaitCommitted(String group, String topic, long records) throws Exception {
    KafkaChecks.awaitCommitted(KAFKA, group, topic, records);
  }

  private static List<ConsumerRecord<String, String>> deadLettersUpTo(String topic, String lastKey)
      throws Exception {
    return KafkaChecks.deadLettersUpTo(KAFKA, DEAD_LETTERS, topic, lastKey);
  }
}
