package dev.inbox.spring.kafka;

import dev.inbox.NonRetryableException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * The listeners an application would write: plain {@code @KafkaListener} methods with
 * {@code @Transactional}, writing through JdbcTemplate or a JPA repository. Every call is counted,
 * so that tests can tell a skipped duplicate from a run whose effect was lost.
 */
@Component
public class KafkaListeners {
  final JdbcTemplate jdbc;
  final KafkaPaymentRepository payments;
  final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

  public KafkaListeners(JdbcTemplate jdbc, KafkaPaymentRepository payments) {
    this.jdbc = jdbc;
    this.payments = payments;
    jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_kafka");
    jdbc.execute("CREATE TABLE IF NOT EXISTS boot_kafka.effects (listener text, key text)");
  }

  @Transactional
  @KafkaListener(topics = "${test.topic.jdbc}", groupId = "jdbc-listener")
  public void onJdbc(ConsumerRecord<String, String> record) {
    call("jdbc");
    jdbc.update(
        "INSERT INTO boot_kafka.effects (listener, key) VALUES ('jdbc', ?)", record.value());
  }

  @Transactional
  @KafkaListener(topics = "${test.topic.jpa}", groupId = "jpa-listener")
  public void onJpa(String payload) {
    call("jpa");
    payments.save(new KafkaPayment(payload));
  }

  @Transactional
  @KafkaListener(topics = "${test.topic.storm}", groupId = "storm-listener", concurrency = "8")
  public void onStorm(String payload) {
    call("storm");
    jdbc.update("INSERT INTO boot_kafka.effects (listener, key) VALUES ('storm', ?)", payload);
  }

  @Transactional
  @KafkaListener(topics = "${test.topic.batch}", groupId = "batch-listener", batch = "true")
  public void onBatch(List<String> payloads) {
    call("batch");
    for (String payload : payloads) {
      jdbc.update("INSERT INTO boot_kafka.effects (listener, key) VALUES ('batch', ?)", payload);
    }
  }

  /**
   * Names the first poison payload of its batch with a {@code BatchListenerFailedException}, as
   * Spring Kafka asks of batch listeners, after writing an effect per payload.
   */
  @Transactional
  @KafkaListener(
      id = "batch-named",
      topics = "${test.topic.batch-named}",
      groupId = "batch-named-listener",
      batch = "true",
      autoStartup = "false")
  public void onBatchNamed(List<String> payloads) {
    call("batch-named");
    for (int i = 0; i < payloads.size(); i++) {
      jdbc.update(
          "INSERT INTO boot_kafka.effects (listener, key) VALUES ('batch-named', ?)",
          payloads.get(i));
    }
    for (int i = 0; i < payloads.size(); i++) {
      if (payloads.get(i).startsWith("poison-")) {
        throw new BatchListenerFailedException("payload " + i + " is poison", i);
      }
    }
  }

  @Transactional
  @KafkaListener(topics = "${test.topic.poison}", groupId = "poison-listener")
  public void onPoison(String payload) {
    call("poison");
    jdbc.update("INSERT INTO boot_kafka.effects (listener, key) VALUES ('poison', ?)", payload);
    throw new IllegalStateException("payment " + payload + " cannot be booked");
  }

  /**
   * Writes, then fails its first call with a checked exception, which Spring's default rollback
   * rule would commit; later calls succeed.
   */
  @Transactional
  @KafkaListener(topics = "${test.topic.checked}", groupId = "checked-listener")
  public void onChecked(String payload) throws java.io.IOException {
    call("checked");
    jdbc.update("INSERT INTO boot_kafka.effects (listener, key) VALUES ('checked', ?)", payload);
    if (calls("checked") == 1) {
      throw new java.io.IOException("the ledger service did not answer");
    }
  }

  /** Writes, then marks its first call's transaction rollback-only and returns normally. */
  @Transactional
  @KafkaListener(topics = "${test.topic.rollback-only}", groupId = "rollback-only-listener")
  public void onRollbackOnly(String payload) {
    call("rollback-only");
    jdbc.update(
        "INSERT INTO boot_kafka.effects (listener, key) VALUES ('rollback-only', ?)", payload);
    if (calls("rollback-only") == 1) {
      org.springframework.transaction.interceptor.TransactionAspectSupport
          .currentTransactionStatus()
          .setRollbackOnly();
    }
  }

  /** Manual acknowledgement: the listener acknowledges its own records; the inbox, duplicates. */
  @Transactional
  @KafkaListener(
      topics = "${test.topic.manual}",
      groupId = "manual-listener",
      containerPostProcessor = "manualAck")
  public void onManual(String payload, Acknowledgment ack) {
    effectThenAcknowledge("manual", payload, ack);
  }

  @Transactional
  @KafkaListener(
      topics = "${test.topic.manual-immediate}",
      groupId = "manual-immediate-listener",
      containerPostProcessor = "manualImmediateAck")
  public void onManualImmediate(String payload, Acknowledgment ack) {
    effectThenAcknowledge("manual-immediate", payload, ack);
  }

  /** Manual acknowledgement on topics that get a mismatch last, so that no later ack covers it. */
  @Transactional
  @KafkaListener(
      topics = "${test.topic.manual-mismatch}",
      groupId = "manual-mismatch-listener",
      containerPostProcessor = "manualAck")
  public void onManualMismatch(String payload, Acknowledgment ack) {
    effectThenAcknowledge("manual-mismatch", payload, ack);
  }

  @Transactional
  @KafkaListener(
      topics = "${test.topic.manual-immediate-mismatch}",
      groupId = "manual-immediate-mismatch-listener",
      containerPostProcessor = "manualImmediateAck")
  public void onManualImmediateMismatch(String payload, Acknowledgment ack) {
    effectThenAcknowledge("manual-immediate-mismatch", payload, ack);
  }

  /**
   * A batch listener in manual ack mode: its one acknowledgement covers the whole batch, the
   * duplicates the inbox left out of its list included. Counts one call per record it is given.
   */
  @Transactional
  @KafkaListener(
      topics = "${test.topic.manual-batch}",
      groupId = "manual-batch-listener",
      batch = "true",
      containerPostProcessor = "manualAck")
  public void onManualBatch(List<String> payloads, Acknowledgment ack) {
    for (String payload : payloads) {
      call("manual-batch");
      jdbc.update(
          "INSERT INTO boot_kafka.effects (listener, key) VALUES ('manual-batch', ?)", payload);
    }
    ack.acknowledge();
  }

  private void effectThenAcknowledge(String listener, String payload, Acknowledgment ack) {
    call(listener);
    jdbc.update("INSERT INTO boot_kafka.effects (listener, key) VALUES (?, ?)", listener, payload);
    ack.acknowledge();
  }

  /** Refuses a payment its policy forbids, for good: no retry can change that. */
  @Transactional
  @KafkaListener(topics = "${test.topic.strict}", groupId = "strict-listener")
  public void onStrict(String payload) {
    call("strict");
    jdbc.update("INSERT INTO boot_kafka.effects (listener, key) VALUES ('strict', ?)", payload);
    if (payload.startsWith("refuse")) {
      throw new NonRetryableException("payment " + payload + " is refused by policy");
    }
  }

  private void call(String listener) {
    calls.computeIfAbsent(listener, l -> new AtomicInteger()).incrementAndGet();
  }

  int calls(String listener) {
    AtomicInteger count = calls.get(listener);
    return count == null ? 0 : count.get();
  }
}
