package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inbox.Inbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A gateway that copies a client's {@code Idempotency-Key: "q-1"} into a message's {@code
 * idempotency-key} header sends the draft's quoted string. Over HTTP that is the key {@code q-1};
 * the consumer must record the same key, or one payment sent over both takes effect twice.
 */
class QuotedHeaderKeyTest extends RabbitTestSupport {

  @Test
  void a_quoted_header_key_is_the_key_http_records_and_the_payment_takes_effect_once()
      throws Exception {
    Inbox inbox = inbox(settings().build());
    started(
        consumerWithoutHandler(inbox, connection)
            .scope("tenant-a")
            .handler((delivery, tx) -> effects.apply(tx, "q", amount(delivery))));
    try (Channel channel = connection.createChannel()) {
      AMQP.BasicProperties properties =
          new AMQP.BasicProperties.Builder()
              .headers(Map.of("idempotency-key", "\"q-1\""))
              .deliveryMode(2)
              .build();
      channel.basicPublish("", queue.queue(), properties, "100".getBytes(StandardCharsets.UTF_8));
    }
    await(
        "the payment",
        Duration.ofSeconds(60),
        () -> effects.count() == 1 && readyMessages(queue.queue()) == 0);

    // What IdempotencyFilter records for the same header over HTTP: the key q-1.
    inbox.execute(
        "tenant-a",
        "q-1",
        tx -> {
          effects.apply(tx, "q", 100);
          return null;
        });

    assertThat(effects.count()).as("effects of one payment over RabbitMQ and HTTP").isEqualTo(1);
    assertThat(inbox.admin().find("tenant-a", "\"q-1\"")).as("the key with its quotes").isEmpty();
  }
}
