package dev.inbox.rabbit;

import com.rabbitmq.client.Delivery;
import java.util.Map;

/**
 * Finds the idempotency key of a delivery; returns null when it has none. Throw to reject the
 * delivery: it is dead-lettered with the exception's message as the reason.
 */
@FunctionalInterface
public interface DeliveryKeyExtractor {
  /** The header read by the default extractor when there is no messageId: {@value}. */
  String DEFAULT_HEADER = "idempotency-key";

  String keyOf(Delivery delivery) throws Exception;

  /** The default: the {@code messageId} property, else the {@value #DEFAULT_HEADER} header. */
  static DeliveryKeyExtractor messageIdOrHeader() {
    return delivery -> {
      String messageId = delivery.getProperties().getMessageId();
      if (messageId != null) {
        return messageId;
      }
      Map<String, Object> headers = delivery.getProperties().getHeaders();
      Object header = headers == null ? null : headers.get(DEFAULT_HEADER);
      return header == null ? null : header.toString();
    };
  }
}
