package dev.inbox.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.ItemStatus;
import dev.inbox.internal.Fingerprints;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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

    assertOnlyTheBadReSendIsDeadLettered(inbox, topic, group, 1);
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
                    BatchFailurePolicy.CONTINUE,
                    (item, tx) -> {
                      throw new IllegalStateException("gateway timeout");
                    })
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.FAILED);

    assertOnlyTheBadReSendIsDeadLettered(inbox, topic, group, 0);
    assertThat(inbox.admin().find(group, "pay-1").orElseThrow().attempts())
        .as("attempts: the failed one and the one that took effect")
        .isEqualTo(2);
  }

  /**
   * Sends pay-1 with 999999 and then with 100, both waiting before the consumer's first poll, and
   * checks that the payment of 100 took effect once and only the record at {@code badOffset} was
   * dead-lettered.
   */
  private void assertOnlyTheBadReSendIsDeadLettered(
      Inbox inbox, String topic, String group, long badOffset) throws Exception {
    sendAll(List.of(withKey(topic, "pay-1", "999999"), withKey(topic, "pay-1", "100")));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    closeables.add(
        consumer(inbox, topic, group)
            .meterRegistry(registry)
            .handler(
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())))
            .build()
            .start());
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(1);
    assertThat(effects.sum()).as("sum").isEqualTo(100);
    assertThat(PayloadFingerprintTest.records(registry, topic, "dead_lettered"))
        .as("dead letters")
        .isEqualTo(1);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 1);
    assertThat(letters).containsOnlyKeys("pay-1");
    assertThat(letters.get("pay-1"))
        .containsEntry(DeadLetterHeaders.REASON, "mismatch")
        .containsEntry(KafkaDeadLetterPublisher.ORIGINAL_OFFSET, Long.toString(badOffset));
  }
}
