package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.inbox.DeadLetterReason;
import dev.inbox.testing.HalfSentParameter;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A handler whose JDBC parameter stream throws an Error half-way through the statement leaves the
 * driver's message half-sent; the consumer still dead-letters that delivery after maxAttempts and
 * applies the others.
 */
class HandlerThrowingMidStatementTest extends RabbitTestSupport {

  @Test
  void theDeliveryIsDeadLetteredAfterMaxAttemptsAndTheOthersTakeEffect() throws Exception {
    InboxRabbitConsumer consumer =
        started(
            consumerWithoutHandler(inbox(settings().maxAttempts(2).build()), connection)
                .handler(
                    (delivery, tx) -> {
                      String id = delivery.getProperties().getMessageId();
                      if (id.equals("blob")) {
                        HalfSentParameter.sendRunningOutOfMemory(tx);
                      }
                      effects.apply(tx, id, amount(delivery));
                    }));
    try (Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      publish(channel, "ok-1", "1");
      publish(channel, "blob", "7");
      publish(channel, "ok-2", "2");
      channel.waitForConfirmsOrDie(30_000);
    }

    await(
        "2 effects and 1 dead letter",
        Duration.ofSeconds(120),
        () -> effects.count() == 2 && readyMessages(queue.deadLetterQueue()) == 1);
    assertThat(consumer.isRunning()).isTrue();
    assertExactlyOnceAndDrained(2, 3);
    Map<String, GetResponse> letters = takeDeadLetters(1);
    assertThat(letters).containsOnlyKeys("7");
    assertThat(reason(letters.get("7"))).isEqualTo(DeadLetterReason.GAVE_UP.code());
  }
}
