package dev.inbox.spring.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.NonRetryableException;
import dev.inbox.spring.DeliveryRejectedException;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.TestKafka;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.config.ContainerPostProcessor;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The inbox under plain {@code @KafkaListener} methods in Spring Kafka's own containers, against a
 * real KRaft broker and PostgreSQL. Every effect is counted exactly, in tables where a doubled
 * effect would show as a second row.
 */
@SpringBootTest(
    classes = {TestApplication.class, KafkaListeners.class, KafkaListenerTest.ErrorHandling.class},
    properties = {
      "inbox.schema=boot_kafka",
      "inbox.max-attempts=3",
      "spring.kafka.consumer.auto-offset-reset=earliest",
      "spring.jpa.hibernate.ddl-auto=update",
      "spring.jpa.properties.hibernate.hbm2ddl.create_namespaces=true"
    })
class KafkaListenerTest {
  private static final TestKafka KAFKA = TestKafka.shared();
  private static final String DEAD_LETTERS = KAFKA.newTopic("boot-dlt", 1);
  // Created once: a property supplier is called on every read of the property.
  private static final String JDBC = KAFKA.newTopic("boot-jdbc", 2);
  private static final String JPA = KAFKA.newTopic("boot-jpa", 2);
  private static final String STORM = KAFKA.newTopic("boot-storm", 8);
  private static final String BATCH = KAFKA.newTopic("boot-batch", 1);
  private static final String BATCH_NAMED = KAFKA.newTopic("boot-batch-named", 1);
  private static final String POISON = KAFKA.newTopic("boot-poison", 1);
  private static final String STRICT = KAFKA.newTopic("boot-strict", 1);
  private static final String CHECKED = KAFKA.newTopic("boot-checked", 1);
  private static final String ROLLBACK_ONLY = KAFKA.newTopic("boot-rollback-only", 1);
  private static final String MANUAL = KAFKA.newTopic("boot-manual", 1);
  private static final String MANUAL_IMMEDIATE = KAFKA.newTopic("boot-manual-immediate", 1);
  private static final String MANUAL_BATCH = KAFKA.newTopic("boot-manual-batch", 1);
  private static final String MANUAL_MISMATCH = KAFKA.newTopic("boot-manual-mismatch", 1);
  private static final String MANUAL_IMMEDIATE_MISMATCH =
      KAFKA.newTopic("boot-manual-immediate-mismatch", 1);

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    registry.add("spring.kafka.bootstrap-servers", KAFKA::bootstrapServers);
    registry.add("test.topic.jdbc", () -> JDBC);
    registry.add("test.topic.jpa", () -> JPA);
    registry.add("test.topic.storm", () -> STORM);
    registry.add("test.topic.batch", () -> BATCH);
    registry.add("test.topic.batch-named", () -> BATCH_NAMED);
    registry.add("test.topic.poison", () -> POISON);
    registry.add("test.topic.manual", () -> MANUAL);
    registry.add("test.topic.strict", () -> STRICT);
    registry.add("test.topic.checked", () -> CHECKED);
    registry.add("test.topic.rollback-only", () -> ROLLBACK_ONLY);
    registry.add("test.topic.manual-immediate", () -> MANUAL_IMMEDIATE);
    registry.add("test.topic.manual-batch", () -> MANUAL_BATCH);
    registry.add("test.topic.manual-mismatch", () -> MANUAL_MISMATCH);
    registry.add("test.topic.manual-immediate-mismatch", () -> MANUAL_IMMEDIATE_MISMATCH);
  }

  /** What an application configures for failures: retries, then a dead-letter topic. */
  @Configuration(proxyBeanMethods = false)
  static class ErrorHandling {
    /** A bean, so that the starter adds the inbox's x-inbox-* headers to what it publishes. */
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

  @Autowired KafkaTemplate<String, String> kafka;
  @Autowired KafkaListeners listeners;
  @Autowired KafkaPaymentRepository payments;
  @Autowired JdbcTemplate jdbc;
  @Autowired Inbox inbox;
  @Autowired KafkaListenerEndpointRegistry registry;

  @Test
  void jdbc_template_writes_commit_with_the_key_and_duplicates_are_skipped_and_acknowledged()
      throws Exception {
    String topic = JDBC;
    List<String> keys = keys(3);
    sendEachTwice(topic, keys);
    awaitCommitted("jdbc-listener", topic, 6);
    for (String key : keys) {
      assertThat(effects("jdbc", key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls("jdbc")).isEqualTo(3);
  }

  @Test
  void jpa_repository_writes_commit_with_the_key() throws Exception {
    String topic = JPA;
    List<String> keys = keys(2);
    sendEachTwice(topic, keys);
    awaitCommitted("jpa-listener", topic, 4);
    for (String key : keys) {
      assertThat(payments.countByPaymentKey(key)).as("payments of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls("jpa")).isEqualTo(2);
  }

  @Test
  void thirty_two_records_with_one_key_on_eight_consumers_take_effect_once() throws Exception {
    String topic = STORM;
    String key = UUID.randomUUID().toString();
    for (int i = 0; i < 32; i++) {
      send(topic, i % 8, key, key);
    }
    awaitCommitted("storm-listener", topic, 32);
    assertThat(effects("storm", key)).isEqualTo(1);
    assertThat(listeners.calls("storm")).isEqualTo(1);
  }

  @Test
  void a_batch_listener_gets_only_the_new_records() throws Exception {
    String topic = BATCH;
    List<String> keys = keys(5);
    sendEachTwice(topic, keys);
    awaitCommitted("batch-listener", topic, 10);
    for (String key : keys) {
      assertThat(effects("batch", key)).as("effects of %s", key).isEqualTo(1);
    }
  }

  /**
   * A batch listener that names its failed record: Spring Kafka commits the records before it as
   * processed and retries from it. The listener's transaction rolled back the writes of those
   * records too, so each must still take effect once, and only the named record be dead-lettered.
   */
  @Test
  void a_batch_listener_naming_its_failed_record_loses_none_before_it() throws Exception {
    String topic = BATCH_NAMED;
    MessageListenerContainer container = registry.getListenerContainer("batch-named");
    List<String> keys = keys(5);
    List<String> handled = keys.subList(0, 2);
    for (String key : handled) {
      send(topic, null, key, key);
    }
    container.start();
    awaitCommitted("batch-named-listener", topic, 2);
    container.stop();
    for (String key : handled) {
      send(topic, null, key, key);
    }
    String before = keys.get(2);
    String poison = keys.get(3);
    String after = keys.get(4);
    send(topic, null, before, before);
    send(topic, null, poison, "poison-" + poison);
    send(topic, null, after, after);
    container.start();
    awaitCommitted("batch-named-listener", topic, 7);

    List<ConsumerRecord<String, String>> dead = deadLettersUpTo(BATCH_NAMED, poison);
    assertThat(dead).extracting(ConsumerRecord::key).containsExactly(poison);
    for (String key : List.of(keys.get(0), keys.get(1), before, after)) {
      assertThat(effects("batch-named", key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(effects("batch-named", "poison-" + poison)).isZero();
    container.stop();
  }

  @Test
  void a_failing_record_is_tried_max_attempts_times_then_reaches_the_dead_letter_recoverer()
      throws Exception {
    String topic = POISON;
    String key = UUID.randomUUID().toString();
    send(topic, null, key, key);
    ConsumerRecord<String, String> dead = awaitDeadLetter(key);
    awaitCommitted("poison-listener", topic, 1);

    assertThat(listeners.calls("poison")).isEqualTo(3);
    assertThat(effects("poison", key)).isZero();
    Header cause = dead.headers().lastHeader("kafka_dlt-exception-cause-fqcn");
    assertThat(cause).isNotNull();
    assertThat(new String(cause.value(), StandardCharsets.UTF_8))
        .isEqualTo(DeliveryRejectedException.class.getName());
    InboxRecord record = inbox.admin().find("poison-listener", key).orElseThrow();
    assertThat(record.attempts()).isEqualTo(3);
    assertThat(header(dead, "x-inbox-reason")).isEqualTo("gave_up");
    assertThat(header(dead, "x-inbox-attempts")).isEqualTo("3");
    assertThat(header(dead, "x-inbox-key")).isEqualTo(key);
    assertThat(header(dead, "x-inbox-scope")).isEqualTo("poison-listener");
    assertThat(header(dead, "x-inbox-detail")).contains("gave up after 3 failed attempts");
  }

  @Test
  void a_checked_exception_rolls_the_record_back_and_the_retry_takes_effect_once()
      throws Exception {
    assertFailedFirstCallRunsAgain(CHECKED, "checked");
  }

  @Test
  void a_transaction_marked_rollback_only_is_not_acknowledged_and_the_retry_takes_effect_once()
      throws Exception {
    assertFailedFirstCallRunsAgain(ROLLBACK_ONLY, "rollback-only");
  }

  /**
   * The listener's first call writes and then fails without its transaction rolling back on its own
   * (a checked exception, or rollback-only and a normal return): nothing of it may commit, the
   * record must not be acknowledged, and the container's retry must run it again.
   */
  private void assertFailedFirstCallRunsAgain(String topic, String listener) throws Exception {
    String key = UUID.randomUUID().toString();
    send(topic, null, key, key);
    awaitCommitted(listener + "-listener", topic, 1);
    assertThat(listeners.calls(listener)).as("calls of the listener").isEqualTo(2);
    assertThat(effects(listener, key)).as("committed effects").isEqualTo(1);
    assertThat(inbox.admin().find(listener + "-listener", key).orElseThrow().attempts())
        .as("attempts counted: the failed first call")
        .isEqualTo(2);
  }

  @Test
  void a_key_reused_with_another_payload_is_dead_lettered_at_once_as_a_mismatch() throws Exception {
    String key = UUID.randomUUID().toString();
    send(STRICT, null, key, "first-" + key);
    send(STRICT, null, key, "second-" + key);
    ConsumerRecord<String, String> dead = awaitDeadLetter(key);

    assertThat(dead.value()).isEqualTo("second-" + key);
    assertThat(header(dead, "x-inbox-reason")).isEqualTo("mismatch");
    // The key's own count: its first record's one successful run.
    assertThat(header(dead, "x-inbox-attempts")).isEqualTo("1");
    assertThat(header(dead, "x-inbox-key")).isEqualTo(key);
    assertThat(header(dead, "x-inbox-scope")).isEqualTo("strict-listener");
    assertThat(dead.headers().lastHeader("x-inbox-exception-class")).isNull();
    assertThat(effects("strict", "first-" + key)).isEqualTo(1);
    assertThat(effects("strict", "second-" + key)).isZero();
  }

  @Test
  void a_listeners_non_retryable_exception_is_dead_lettered_at_once_with_its_attempt()
      throws Exception {
    String key = UUID.randomUUID().toString();
    send(STRICT, null, key, "refuse-" + key);
    ConsumerRecord<String, String> dead = awaitDeadLetter(key);

    assertThat(header(dead, "x-inbox-reason")).isEqualTo("non_retryable");
    assertThat(header(dead, "x-inbox-attempts")).isEqualTo("1");
    assertThat(header(dead, "x-inbox-key")).isEqualTo(key);
    assertThat(header(dead, "x-inbox-scope")).isEqualTo("strict-listener");
    assertThat(header(dead, "x-inbox-exception-class"))
        .isEqualTo(NonRetryableException.class.getName());
    assertThat(header(dead, "x-inbox-exception-message"))
        .isEqualTo("payment refuse-" + key + " is refused by policy");
    assertThat(effects("strict", "refuse-" + key)).isZero();
    assertThat(inbox.admin().find("strict-listener", key).orElseThrow().attempts()).isEqualTo(1);
  }

  /** The one value of a header (a repeated x-inbox-* header would be a bug). */
  private static String header(ConsumerRecord<String, String> record, String name) {
    List<Header> all = new ArrayList<>();
    record.headers().headers(name).forEach(all::add);
    assertThat(all).as("headers %s", name).hasSize(1);
    return new String(all.get(0).value(), StandardCharsets.UTF_8);
  }

  @Test
  void under_manual_ack_mode_duplicates_are_acknowledged_by_the_inbox_and_never_reach_the_listener()
      throws Exception {
    assertDuplicatesAcknowledged(MANUAL, "manual");
  }

  @Test
  void under_manual_immediate_ack_mode_duplicates_are_acknowledged_too() throws Exception {
    assertDuplicatesAcknowledged(MANUAL_IMMEDIATE, "manual-immediate");
  }

  /**
   * A record the inbox refuses is never given to the listener, so only the error handler can commit
   * its offset: the DefaultErrorHandler commits a record its recoverer published to the dead-letter
   * topic. The mismatch is the partition's last record, so that no acknowledgement of a later one
   * commits past it.
   */
  @Test
  void under_manual_ack_mode_a_dead_lettered_mismatch_is_committed() throws Exception {
    assertMismatchCommitted(MANUAL_MISMATCH, "manual-mismatch");
  }

  @Test
  void under_manual_immediate_ack_mode_a_dead_lettered_mismatch_is_committed() throws Exception {
    assertMismatchCommitted(MANUAL_IMMEDIATE_MISMATCH, "manual-immediate-mismatch");
  }

  private void assertMismatchCommitted(String topic, String listener) throws Exception {
    String key = UUID.randomUUID().toString();
    send(topic, null, key, "first-" + key);
    send(topic, null, key, "second-" + key);
    ConsumerRecord<String, String> dead = awaitDeadLetter(key);
    assertThat(dead.value()).isEqualTo("second-" + key);
    assertThat(header(dead, "x-inbox-reason")).isEqualTo("mismatch");
    awaitCommitted(listener + "-listener", topic, 2);
    assertThat(effects(listener, "first-" + key)).isEqualTo(1);
    assertThat(effects(listener, "second-" + key)).isZero();
    assertThat(listeners.calls(listener)).isEqualTo(1);
  }

  /**
   * A batch listener's one acknowledgement commits its whole batch: the group commits past the
   * duplicates the inbox left out of the listener's list, so none is delivered again.
   */
  @Test
  void under_manual_ack_mode_a_batch_listeners_acknowledgement_commits_its_duplicates_too()
      throws Exception {
    List<String> keys = keys(4);
    for (String key : keys.subList(0, 3)) {
      send(MANUAL_BATCH, null, key, key);
    }
    awaitCommitted("manual-batch-listener", MANUAL_BATCH, 3);
    // Duplicates and a new record, then a duplicate alone (acknowledged by the inbox).
    for (String key : keys) {
      send(MANUAL_BATCH, null, key, key);
    }
    awaitCommitted("manual-batch-listener", MANUAL_BATCH, 7);
    send(MANUAL_BATCH, null, keys.get(3), keys.get(3));
    awaitCommitted("manual-batch-listener", MANUAL_BATCH, 8);
    for (String key : keys) {
      assertThat(effects("manual-batch", key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls("manual-batch")).as("records given to the listener").isEqualTo(4);
  }

  /**
   * Three keys, then the same three again: the last records are duplicates, so the group commits
   * past them only when the inbox acknowledged them (the listener, which acknowledges its own
   * records, is never called for them).
   */
  private void assertDuplicatesAcknowledged(String topic, String listener) throws Exception {
    List<String> keys = keys(3);
    sendEachTwice(topic, keys);
    awaitCommitted(listener + "-listener", topic, 6);
    for (String key : keys) {
      assertThat(effects(listener, key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls(listener)).isEqualTo(3);
  }

  private static List<String> keys(int count) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(UUID.randomUUID().toString());
    }
    return keys;
  }

  /** Each key twice, the second time as a producer's re-send of the same payload. */
  private void sendEachTwice(String topic, List<String> keys) throws Exception {
    for (int round = 0; round < 2; round++) {
      for (String key : keys) {
        send(topic, null, key, key);
      }
    }
  }

  private void send(String topic, Integer partition, String key, String value) throws Exception {
    KafkaChecks.send(kafka, topic, partition, key, value);
  }

  private int effects(String listener, String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_kafka.effects WHERE listener = ? AND key = ?",
        Integer.class,
        listener,
        key);
  }

  /** Until the group has committed past every record: each was handled or acknowledged. */
  private void awaitCommitted(String group, String topic, long records) throws Exception {
    KafkaChecks.awaitCommitted(KAFKA, group, topic, records);
  }

  private List<ConsumerRecord<String, String>> deadLettersUpTo(String topic, String lastKey)
      throws Exception {
    return KafkaChecks.deadLettersUpTo(KAFKA, DEAD_LETTERS, topic, lastKey);
  }

  private ConsumerRecord<String, String> awaitDeadLetter(String key) throws Exception {
    return KafkaChecks.deadLetters(KAFKA, DEAD_LETTERS, r -> key.equals(r.key()), key).get(0);
  }
}
