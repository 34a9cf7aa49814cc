package dev.inbox.rabbit;

import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.LongString;
import dev.inbox.InboxKeys;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
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

  /**
   * The default: the {@code messageId} property, else the {@value #DEFAULT_HEADER} header.
   *
   * <p>The header is read as an HTTP {@code Idempotency-Key} ({@link
   * InboxKeys#fromIdempotencyKeyHeader}): a gateway that copies a client's {@code "q-1"} into it
   * names the key {@code q-1}, as the HTTP filter does, so the payment is one key on both channels.
   * A header that is not valid UTF-8, or not a valid key, rejects the delivery. The {@code
   * messageId} is taken as it is, unless it holds U+FFFD: the AMQP client decodes it leniently, so
   * U+FFFD stands for bytes that were not UTF-8, and such a delivery is rejected too.
   */
  static DeliveryKeyExtractor messageIdOrHeader() {
    return delivery -> {
      String messageId = delivery.getProperties().getMessageId();
      if (messageId != null) {
        if (messageId.indexOf('\uFFFD') >= 0) {
          // The AMQP client decodes the property leniently: U+FFFD stands for bytes that were not
          // UTF-8, and two different such ids would be one key.
          throw new IllegalArgumentException(
              "the messageId holds U+FFFD, which stands for bytes that were not UTF-8");
        }
        return messageId;
      }
      Map<String, Object> headers = delivery.getProperties().getHeaders();
      Object header = headers == null ? null : headers.get(DEFAULT_HEADER);
      return header == null ? null : InboxKeys.fromIdempotencyKeyHeader(headerText(header));
    };
  }

  /**
   * A header value as text. AMQP carries strings as bytes, and decoding them leniently would map
   * different invalid byte sequences to the same key, so a payment could pass for a duplicate of
   * another: invalid UTF-8 is refused instead.
   */
  static String headerText(Object value) {
    byte[] bytes;
    if (value instanceof LongString longString) {
      bytes = longString.getBytes();
    } else if (value instanceof byte[] raw) {
      bytes = raw;
    } else {
      return value.toString();
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          "the " + DEFAULT_HEADER + " header is not valid UTF-8 (" + bytes.length + " bytes)", e);
    }
  }
}
