package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A dead letter the broker refuses: visible, retried after a backoff, and never lost. */
class DeadLetterPublishFailureTest extends RabbitTestSupport {

  @Test
  void aDeadLetterThatCannotBePublishedIsCountedAsFailedNotDeadLetteredAndRetriedAfterABackoff()
      throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    InboxRabbitConsumer consumer =
        started(
            consumer(inbox(settings().build()), connection)
                .deadLetterExchange("no-such-exchange-" + UUID.randomUUID())
                .meterRegistry(registry));
    try (Channel channel = connection.createChannel()) {
      AMQP.BasicProperties blankKey = new AMQP.BasicProperties.Builder().messageId(" ").build();
      channel.basicPublish("", queue.queue(), blankKey, "5".getBytes(StandardCharsets.UTF_8));
      publish(channel, "pay-1", "100");
    }

    await(
        "the dead letter to be counted",
        Duration.ofSeconds(60),
        () -> count(registry, "dead_lettered") + count(registry, "dead_letter_failed") >= 1);
    assertThat(count(registry, "dead_lettered")).as("dead letters counted as sent").isZero();
    long firstFailure = System.nanoTime();
    await(
        "two more failed dead letters",
        Duration.ofSeconds(60),
        () -> count(registry, "dead_letter_failed") >= 3);
    long betweenFirstAndThird = System.nanoTime() - firstFailure;
    await("the valid payment", Duration.ofSeconds(60), () -> effects.count() == 1);
    consumer.close();

    assertThat(count(registry, "dead_lettered")).as("dead letters counted as sent").isZero();
    // Backoffs of 200 and 400 ms, less the 100 ms between two looks at the counter.
    assertThat(Duration.ofNanos(betweenFirstAndThird))
        .as("time from the first failed dead letter to the third")
        .isGreaterThanOrEqualTo(Duration.ofMillis(500));
    assertThat(readyMessages(queue.queue())).as("the refused delivery, back in the queue").isOne();
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isZero();
    assertThat(effects.count()).as("effects").isEqualTo(1);
  }
}
