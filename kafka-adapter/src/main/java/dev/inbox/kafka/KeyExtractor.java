package dev.inbox.kafka;

import dev.inbox.InboxKeys;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Finds the idempotency key of a record. Throw to reject a record: it is then dead-lettered with
 * the exception's message as the reason, and never processed.
 */
@FunctionalInterface
public interface KeyExtractor<K, V> {
  /** The header that carries a producer-chosen key: {@value}. */
  String DEFAULT_HEADER = "idempotency-key";

  String keyOf(ConsumerRecord<K, V> record) throws Exception;

  /**
   * The default: the {@value #DEFAULT_HEADER} header when present, else {@code
   * topic-partition@offset}. Coordinates make redeliveries harmless, but not a producer's re-send.
   *
   * <p>The header is read as an HTTP {@code Idempotency-Key} ({@link
   * InboxKeys#fromIdempotencyKeyHeader}): a gateway that copies a client's {@code "q-1"} into it
   * names the key {@code q-1}, as the HTTP filter does, so the payment is one key on both channels.
   * A header that is not valid UTF-8, or not a valid key, rejects the record.
   */
  static <K, V> KeyExtractor<K, V> headerOrCoordinates() {
    return record -> {
      String value = headerValue(record, DEFAULT_HEADER);
      return value != null ? InboxKeys.fromIdempotencyKeyHeader(value) : coordinates(record);
    };
  }

  /** The value of the given header, taken as it is; a record without it is rejected. */
  static <K, V> KeyExtractor<K, V> header(String name) {
    return record -> {
      String key = headerValue(record, name);
      if (key == null) {
        throw new IllegalArgumentException("the record has no '" + name + "' header");
      }
      return key;
    };
  }

  /** {@code topic-partition@offset}: unique per record, so only redeliveries are recognised. */
  static <K, V> KeyExtractor<K, V> coordinates() {
    return KeyExtractor::coordinates;
  }

  private static String coordinates(ConsumerRecord<?, ?> record) {
    return record.topic() + "-" + record.partition() + "@" + record.offset();
  }

  /**
   * The last header of that name decoded as strict UTF-8, or null when absent.
   *
   * @throws IllegalArgumentException when the bytes are not valid UTF-8
   */
  private static String headerValue(ConsumerRecord<?, ?> record, String name) {
    Header header = record.headers().lastHeader(name);
    byte[] bytes = header == null ? null : header.value();
    if (bytes == null) {
      return null;
    }
    if (isAscii(bytes)) {
      // Valid UTF-8 as it is, and the common case: no decoder to create for every record.
      return new String(bytes, StandardCharsets.US_ASCII);
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("the '" + name + "' header is not valid UTF-8", e);
    }
  }

  private static boolean isAscii(byte[] bytes) {
    for (byte b : bytes) {
      if (b < 0) {
        return false;
      }
    }
    return true;
  }
}
