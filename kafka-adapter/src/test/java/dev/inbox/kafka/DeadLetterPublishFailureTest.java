package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.DeadLetterHeaders;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** A dead letter the broker refuses: the record stays uncommitted, visibly, until it is sent. */
class DeadLetterPublishFailureTest extends KafkaTestSupport {

  @Test
  void aDeadLetterThatCannotBePublishedLeavesTheRecordUncommittedCountedAndRetried()
      throws Exception {
    String topic = kafka.newTopic("dlt-refused", 1);
    String group = newGroup();
    ProducerRecord<String, String> blankKey = new ProducerRecord<>(topic, "blank", "5");
    blankKey.headers().add("idempotency-key", " ".getBytes(StandardCharsets.UTF_8));
    sendAll(List.of(withKey(topic, "ok-1", "1"), blankKey, withKey(topic, "ok-2", "2")));
    // Not a legal topic name: the broker refuses every dead letter until the name is fixed.
    AtomicReference<String> deadLetterTopic = new AtomicReference<>("no such topic!");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    closeables.add(
        consumer(inbox(settings().build()), topic, group)
            .deadLetterTopic(original -> deadLetterTopic.get())
            .meterRegistry(registry)
            .handler(
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())))
            .build()
            .start());

    await(
        "two failed attempts to publish the dead letter",
        Duration.ofSeconds(60),
        () -> PayloadFingerprintTest.records(registry, topic, "dead_letter_failed") >= 2);
    assertThat(committed(group, new TopicPartition(topic, 0)))
        .as("committed offset of the partition (the refused record is at offset 1)")
        .isLessThanOrEqualTo(1);

    deadLetterTopic.set(topic + ".DLT");
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    assertThat(effects.count()).as("effects").isEqualTo(2);
    assertThat(effects.sum()).as("sum").isEqualTo(3);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 1);
    assertThat(letters).hasSize(1);
    assertThat(letters.get("blank")).containsEntry(DeadLetterHeaders.REASON, "invalid_key");
  }

  private long committed(String group, TopicPartition partition) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      OffsetAndMetadata offset =
          admin
              .listConsumerGroupOffsets(group)
              .partitionsToOffsetAndMetadata()
              .get()
              .get(partition);
      return offset == null ? 0 : offset.offset();
    }
  }
}
