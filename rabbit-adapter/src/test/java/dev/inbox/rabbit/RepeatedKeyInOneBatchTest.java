package dev.inbox.rabbit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.DeadLetterReason;
import dev.inbox.Inbox;
import dev.inbox.ItemStatus;
import dev.inbox.internal.Fingerprints;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One batch holding a key twice, a re-send with another amount first and the true payment behind
 * it: only the re-send is dead-lettered.
 */
class RepeatedKeyInOneBatchTest extends RabbitTestSupport {

  @Test
  void aPaymentWhoseAttemptFailedRunsWhenItFollowsABadReSendInOneBatch() throws Exception {
    Inbox inbox = inbox(settings().maxAttempts(5).build());
    // What the consumer records when pay-1's handler throws once: a failed attempt with the
    // fingerprint of the body 100, in the queue's scope.
    assertThat(
            inbox
                .executeBatch(
                    queue.queue(),
                    List.of(
                        new BatchItem<>("pay-1", Fingerprints.ofMessage("100".getBytes(UTF_8)), 0)),
                    BatchFailurePolicy.CONTINUE,
                    (item, tx) -> {
                      throw new IllegalStateException("gateway timeout");
                    })
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.FAILED);
    try (Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      publish(channel, "pay-1", "999999");
      publish(channel, "pay-1", "100");
      channel.waitForConfirmsOrDie(30_000);
    }

    // Both are ready before the consumer starts, and its linger gathers them into one batch.
    started(consumer(inbox, connection).linger(Duration.ofSeconds(1)));
    await(
        "the queue to drain",
        Duration.ofSeconds(60),
        () ->
            readyMessages(queue.queue()) == 0
                && (effects.count() == 1 || readyMessages(queue.deadLetterQueue()) == 2));

    assertThat(effects.count()).as("effects").isEqualTo(1);
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isEqualTo(1);
    assertExactlyOnceAndDrained(1, 100);
    Map<String, GetResponse> letters = takeDeadLetters(1);
    assertThat(letters).containsOnlyKeys("999999");
    assertThat(reason(letters.get("999999"))).isEqualTo(DeadLetterReason.MISMATCH.code());
    assertThat(inbox.admin().find(queue.queue(), "pay-1").orElseThrow().attempts())
        .as("attempts: the failed one and the one that took effect")
        .isEqualTo(2);
  }
}
