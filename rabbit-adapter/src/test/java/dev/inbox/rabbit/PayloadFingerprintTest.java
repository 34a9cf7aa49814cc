package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A key re-sent with another body is a mismatch, not a duplicate. */
class PayloadFingerprintTest extends RabbitTestSupport {

  @Test
  void aKeyResentWithAnotherAmountIsDeadLetteredAsAMismatchAndTakesEffectOnce() throws Exception {
    started(consumer(inbox(settings().build()), connection));
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "100");
      publish(channel, "pay-2", "5");
    }
    await("the first payments", Duration.ofSeconds(60), () -> effects.count() == 2);
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "999999");
      publish(channel, "pay-2", "5");
      // In one batch too: the repeat of a key within a batch is compared with its first.
      publish(channel, "pay-3", "7");
      publish(channel, "pay-3", "777777");
    }

    await(
        "2 dead letters",
        Duration.ofSeconds(60),
        () -> readyMessages(queue.deadLetterQueue()) == 2 && readyMessages(queue.queue()) == 0);
    assertExactlyOnceAndDrained(3, 112);
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isEqualTo(2);
    for (GetResponse dead : takeDeadLetters(2).values()) {
      assertThat(new String(dead.getBody())).isIn("999999", "777777");
      assertThat(reason(dead)).isEqualTo("mismatch");
    }
  }

  /**
   * An empty body is a body like any other (AMQP has no null body: the client hands over an empty
   * array), so it is fingerprinted and compared too.
   */
  @Test
  void anEmptyBodyReusingAKeyOrFollowedByABodyIsAMismatchAndARepeatedEmptyBodyADuplicate()
      throws Exception {
    started(
        consumerWithoutHandler(inbox(settings().build()), connection)
            .handler(
                (delivery, tx) ->
                    effects.apply(
                        tx,
                        delivery.getProperties().getMessageId(),
                        delivery.getBody().length == 0 ? 0 : amount(delivery))));
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "100");
      publish(channel, "pay-2", "");
      publish(channel, "pay-3", "");
    }
    await("the first payments", Duration.ofSeconds(60), () -> effects.count() == 3);
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "");
      publish(channel, "pay-2", "999999");
      publish(channel, "pay-3", "");
    }

    await(
        "2 dead letters",
        Duration.ofSeconds(60),
        () -> readyMessages(queue.deadLetterQueue()) == 2 && readyMessages(queue.queue()) == 0);
    assertExactlyOnceAndDrained(3, 100);
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isEqualTo(2);
    Map<String, GetResponse> letters = takeDeadLetters(2);
    assertThat(letters).as("dead letters by body").containsOnlyKeys("", "999999");
    for (GetResponse dead : letters.values()) {
      assertThat(reason(dead)).isEqualTo("mismatch");
    }
  }

  @Test
  void withFingerprintsOffAKeyResentWithAnotherAmountIsAcknowledgedAsADuplicate() throws Exception {
    started(consumer(inbox(settings().build()), connection).fingerprintPayloads(false));
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "100");
    }
    await("the first payment", Duration.ofSeconds(60), () -> effects.count() == 1);
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "999999");
    }

    assertExactlyOnceAndDrained(1, 100);
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isZero();
  }
}
