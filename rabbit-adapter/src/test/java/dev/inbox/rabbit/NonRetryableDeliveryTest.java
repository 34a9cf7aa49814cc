package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.testing.PaymentStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A handler that throws {@link NonRetryableException} sends its delivery to the dead letter at
 * once, on the real broker: one attempt counted of the three allowed (the inbox's count, since a
 * handler may run twice within one attempt when its batch is run again carefully), reason {@code
 * non_retryable}, and every other delivery takes effect once.
 */
class NonRetryableDeliveryTest extends RabbitTestSupport {

  @ParameterizedTest(name = "{0} handler")
  @ValueSource(strings = {"per-delivery", "at-once"})
  void aDeliveryWhoseHandlerThrowsNonRetryableIsDeadLetteredAtOnce(String handler)
      throws Exception {
    List<PaymentStream.Message> messages = new ArrayList<>();
    long expectedSum = 0;
    for (int i = 0; i < 100; i++) {
      messages.add(new PaymentStream.Message("ok-" + i, i + 1));
      expectedSum += i + 1;
      if (i == 30) {
        messages.add(new PaymentStream.Message("closed-1", -1));
      }
    }
    publish(messages);
    Inbox inbox = inbox(settings().maxAttempts(3).build());
    InboxRabbitConsumer.Builder builder = consumerWithoutHandler(inbox, connection);
    if (handler.equals("at-once")) {
      builder.newDeliveriesHandler(
          (deliveries, tx) -> {
            for (Delivery delivery : deliveries) {
              if (amount(delivery) < 0) {
                throw new NonRetryableException("the account is closed");
              }
            }
            for (Delivery delivery : deliveries) {
              effects.apply(tx, delivery.getProperties().getMessageId(), amount(delivery));
            }
          });
    } else {
      builder.handler(
          (delivery, tx) -> {
            if (amount(delivery) < 0) {
              throw new NonRetryableException("the account is closed");
            }
            effects.apply(tx, delivery.getProperties().getMessageId(), amount(delivery));
          });
    }
    started(builder);

    await(
        "the dead letter",
        Duration.ofSeconds(60),
        () -> readyMessages(queue.deadLetterQueue()) == 1);
    assertExactlyOnceAndDrained(100, expectedSum);
    assertThat(inbox.admin().find(queue.queue(), "closed-1").orElseThrow().attempts())
        .as("attempts counted in the inbox")
        .isEqualTo(1);
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isEqualTo(1);
    GetResponse dead = takeDeadLetters(1).get("-1");
    assertThat(dead.getProps().getMessageId()).isEqualTo("closed-1");
    assertThat(reason(dead)).isEqualTo("non_retryable");
    assertThat(detail(dead)).isEqualTo("the account is closed");
    assertThat(header(dead, DeadLetterHeaders.KEY)).isEqualTo("closed-1");
    assertThat(dead.getProps().getHeaders().get(DeadLetterHeaders.ATTEMPTS)).isEqualTo(1);
    assertThat(header(dead, DeadLetterHeaders.EXCEPTION_CLASS))
        .isEqualTo(NonRetryableException.class.getName());
    assertThat(header(dead, DeadLetterHeaders.EXCEPTION_MESSAGE))
        .isEqualTo("the account is closed");
    assertThat(header(dead, InboxRabbitConsumer.ORIGINAL_QUEUE_HEADER)).isEqualTo(queue.queue());
  }
}
