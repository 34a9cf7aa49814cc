package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

/** A key re-sent with another value is a mismatch, not a duplicate. */
class PayloadFingerprintTest extends KafkaTestSupport {

  @Test
  void aKeyResentWithAnotherAmountIsDeadLetteredAsAMismatchAndTakesEffectOnce() throws Exception {
    String topic = kafka.newTopic("mismatch", 1);
    String group = newGroup();
    startConsumer(inbox(settings().build()), topic, group);
    sendAll(List.of(withKey(topic, "pay-1", "100"), withKey(topic, "pay-2", "5")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    sendAll(
        List.of(
            withKey(topic, "pay-1", "999999"),
            withKey(topic, "pay-2", "5"),
            // In one poll too: the repeat of a key within a batch is compared with its first.
            withKey(topic, "pay-3", "7"),
            withKey(topic, "pay-3", "777777")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(3);
    assertThat(effects.sum()).as("sum").isEqualTo(112);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 2);
    assertThat(letters).hasSize(2);
    for (String key : List.of("pay-1", "pay-3")) {
      assertThat(letters.get(key)).containsEntry(DeadLetterHeaders.REASON, "mismatch");
    }
  }

  /**
   * A null value (a tombstone) is a value of its own: neither a match for any amount nor for an
   * empty value. Each pair is sent in two polls, so that the second is compared with a record.
   */
  @Test
  void aNullValueReusingAKeyOrFollowedByAValueIsAMismatchAndARepeatedNullADuplicate()
      throws Exception {
    String topic = kafka.newTopic("tombstone", 1);
    String group = newGroup();
    closeables.add(
        consumer(inbox(settings().build()), topic, group)
            .handler((record, tx) -> effects.apply(tx, record.key(), amountOrZero(record.value())))
            .build()
            .start());
    sendAll(
        List.of(
            withKey(topic, "pay-1", "100"),
            withKey(topic, "pay-2", null),
            withKey(topic, "pay-3", null),
            withKey(topic, "pay-4", "")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    sendAll(
        List.of(
            withKey(topic, "pay-1", null),
            withKey(topic, "pay-2", "999999"),
            withKey(topic, "pay-3", null),
            withKey(topic, "pay-4", null)));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(4);
    assertThat(effects.sum()).as("sum").isEqualTo(100);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 3);
    assertThat(letters).as("dead letters by key").containsOnlyKeys("pay-1", "pay-2", "pay-4");
    for (Map<String, String> letter : letters.values()) {
      assertThat(letter).containsEntry(DeadLetterHeaders.REASON, "mismatch");
    }
  }

  private static long amountOrZero(String value) {
    return value == null || value.isEmpty() ? 0 : Long.parseLong(value);
  }

  @Test
  void withFingerprintsOffAKeyResentWithAnotherAmountIsCommittedAsADuplicate() throws Exception {
    String topic = kafka.newTopic("mismatch-off", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    closeables.add(
        consumer(inbox, topic, group)
            .fingerprintPayloads(false)
            .meterRegistry(registry)
            .handler(
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())))
            .build()
            .start());
    sendAll(List.of(withKey(topic, "pay-1", "100")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    sendAll(List.of(withKey(topic, "pay-1", "999999")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(1);
    assertThat(effects.sum()).as("sum").isEqualTo(100);
    assertThat(records(registry, topic, "duplicate")).isEqualTo(1);
    assertThat(records(registry, topic, "dead_lettered")).isZero();
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      assertThat(admin.listTopics().names().get()).doesNotContain(topic + ".DLT");
    }
  }

  static double records(SimpleMeterRegistry registry, String topic, String outcome) {
    Counter counter =
        registry.find("inbox.kafka.records").tag("topic", topic).tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }
}
