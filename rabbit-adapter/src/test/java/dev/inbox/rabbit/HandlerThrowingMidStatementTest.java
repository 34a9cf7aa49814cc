package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A handler whose JDBC parameter stream throws an Error half-way through the statement leaves the
 * driver's message half-sent; the consumer still dead-letters that delivery after maxAttempts and
 * applies the others.
 */
class HandlerThrowingMidStatementTest extends RabbitTestSupport {

  /** A document of 1 000 000 bytes whose reading runs out of memory after 100 000 of them. */
  private static InputStream documentRunningOutOfMemory() {
    return new InputStream() {
      private int given;

      @Override
      public int read() {
        if (given++ >= 100_000) {
          throw new OutOfMemoryError("Java heap space (simulated, while reading the document)");
        }
        return 'x';
      }
    };
  }

  private static void sendDocument(Connection tx) throws Exception {
    try (PreparedStatement ps = tx.prepareStatement("SELECT octet_length(?)")) {
      ps.setBinaryStream(1, documentRunningOutOfMemory(), 1_000_000);
      ps.executeQuery();
    }
  }

  @Test
  void theDeliveryIsDeadLetteredAfterMaxAttemptsAndTheOthersTakeEffect() throws Exception {
    InboxRabbitConsumer consumer =
        started(
            consumerWithoutHandler(inbox(settings().maxAttempts(2).build()), connection)
                .handler(
                    (delivery, tx) -> {
                      String id = delivery.getProperties().getMessageId();
                      if (id.equals("blob")) {
                        sendDocument(tx);
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
    assertThat(reason(letters.get("7"))).isEqualTo(InboxRabbitConsumer.REASON_GAVE_UP);
  }
}
