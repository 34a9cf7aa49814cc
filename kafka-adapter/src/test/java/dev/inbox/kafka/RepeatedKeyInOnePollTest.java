package dev.inbox.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.BatchItem;
import dev.inbox.Fingerprints;
import dev.inbox.Inbox;
import dev.inbox.ItemStatus;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * One poll holding a key twice, a re-send with another amount first and the true payment behind it:
 * only the re-send is dead-lettered, whatever state the key's record is in.
 */
class RepeatedKeyInOnePollTest extends KafkaTestSupport {

  @Test
  void aTrueReSendBehindABadOneInOnePollIsADuplicateOfTheCompletedPayment() throws Exception {
    String topic = kafka.newTopic("repeat-completed", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    InboxKafkaConsumer<String, String> first = startConsumer(inbox, topic, group);
    sendAll(List.of(withKey(topic, "pay-1", "100")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    first.close();

    // Both wait in the partition before the next consumer's first poll.
    sendAll(List.of(withKey(topic, "pay-1", "999999"), withKey(topic, "pay-1", "100")));
    startConsumer(inbox, topic, group);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(1);
    assertThat(effects.sum()).as("sum").isEqualTo(100);
    assertThat(deadLetteredValues(topic + ".DLT", 1))
        .as("dead-lettered values and reasons")
        .containsExactly(Map.entry("999999", "mismatch"));
  }

  @Test
  void aPaymentWhoseAttemptFailedRunsWhenItFollowsABadReSendInOnePoll() throws Exception {
    String topic = kafka.newTopic("repeat-failed", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().maxAttempts(5).build());
    // What the consumer records when pay-1's handler throws once: a failed attempt with the
    // fingerprint of the value 100, in the group's scope.
    assertThat(
            inbox
                .executeBatch(
                    group,
                    List.of(
                        new BatchItem<>(
                            "pay-1", Fingerprints.ofMessage("100".getBytes(UTF_8)), "100")),
                    (item, tx) -> {
                      throw new IllegalStateException("gateway timeout");
                    })
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.FAILED);

    sendAll(List.of(withKey(topic, "pay-1", "999999"), withKey(topic, "pay-1", "100")));
    startConsumer(inbox, topic, group);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(1);
    assertThat(effects.sum()).as("sum").isEqualTo(100);
    assertThat(deadLetteredValues(topic + ".DLT", 1))
        .as("dead-lettered values and reasons")
        .containsExactly(Map.entry("999999", "mismatch"));
    assertThat(inbox.find(group, "pay-1").orElseThrow().attempts())
        .as("attempts: the failed one and the one that took effect")
        .isEqualTo(2);
  }

  /** The dead letters' reasons by the original record's value; a value seen twice is kept twice. */
  private Map<String, String> deadLetteredValues(String topic, int expected) {
    Map<String, String> letters = new HashMap<>();
    try (KafkaConsumer<String, String> reader =
        new KafkaConsumer<>(
            Map.of(
                "bootstrap.servers", kafka.bootstrapServers(),
                "group.id", newGroup(),
                "auto.offset.reset", "earliest"),
            new StringDeserializer(),
            new StringDeserializer())) {
      reader.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      int read = 0;
      while (read < expected && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> record : reader.poll(Duration.ofMillis(200))) {
          read++;
          letters.merge(
              record.value(),
              new String(
                  record.headers().lastHeader(KafkaDeadLetterPublisher.REASON).value(), UTF_8),
              (a, b) -> a + "," + b);
        }
      }
      // Anything beyond the expected letters would be a wrong or doubled dead letter.
      for (ConsumerRecord<String, String> extra : reader.poll(Duration.ofMillis(500))) {
        letters.merge(extra.value(), "unexpected", (a, b) -> a + "," + b);
      }
    }
    return letters;
  }
}
