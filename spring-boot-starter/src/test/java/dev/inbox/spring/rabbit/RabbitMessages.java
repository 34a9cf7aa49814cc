package dev.inbox.spring.rabbit;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/** Sends keyed text messages and reads queue depths, for the rabbit tests. */
final class RabbitMessages {
  private RabbitMessages() {}

  static List<String> keys(int count) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(UUID.randomUUID().toString());
    }
    return keys;
  }

  /** A text message with this messageId, the inbox's key. */
  static void send(RabbitTemplate rabbit, String queue, String key, String body) {
    rabbit.send(
        "",
        queue,
        MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
            .setContentType("text/plain")
            .setMessageId(key)
            .build());
  }

  /** The messages ready on the queue: neither delivered nor unacknowledged by a consumer. */
  static int ready(RabbitTemplate rabbit, String queue) {
    return rabbit.execute(channel -> channel.queueDeclarePassive(queue)).getMessageCount();
  }
}
