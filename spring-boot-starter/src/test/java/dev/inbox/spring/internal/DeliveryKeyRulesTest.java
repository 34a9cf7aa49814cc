package dev.inbox.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.InboxKeys;
import dev.inbox.kafka.KeyExtractor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * The interceptor claims every message whose {@code invalidKey()} is null in one {@code claimAll},
 * which validates every key and throws {@code InvalidKeyException} for the whole batch on one
 * broken key. So a message whose key breaks a rule is reported invalid by its delivery (and refused
 * alone, INVALID_KEY), not handed to the batch claim.
 */
class DeliveryKeyRulesTest {

  @Test
  void a_rabbit_message_id_that_is_no_valid_key_is_reported_invalid() {
    for (String id : List.of("", "   ", "bad\u0001id", "x".repeat(100_000))) {
      MessageProperties properties = new MessageProperties();
      properties.setMessageId(id);
      Message message = new Message("{}".getBytes(StandardCharsets.UTF_8), properties);
      Delivery.Message found =
          new RabbitDelivery(null, List.of(message), true, null).messages().get(0);
      if (found.invalidKey() == null) {
        assertThat(InboxKeys.brokenRule(found.key()))
            .as("messageId of length %d is taken as a valid key", id.length())
            .isNull();
      }
    }
  }

  @Test
  void a_kafka_header_key_that_is_no_valid_key_is_reported_invalid() {
    KeyExtractor<Object, Object> keys = KeyExtractor.header("my-key");
    for (String value : List.of("", "   ", "bad\u0001id")) {
      ConsumerRecord<Object, Object> record = new ConsumerRecord<>("t", 0, 0L, null, "{}");
      record.headers().add("my-key", value.getBytes(StandardCharsets.UTF_8));
      Delivery.Message found =
          new KafkaDelivery("scope", List.of(record), keys, true).messages().get(0);
      if (found.invalidKey() == null) {
        assertThat(InboxKeys.brokenRule(found.key()))
            .as("header value '%s' is taken as a valid key", value)
            .isNull();
      }
    }
  }
}
