package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** The default key extractor reads the header as strict UTF-8, ASCII or not. */
class KeyExtractorTest {
  private static ConsumerRecord<byte[], byte[]> withHeader(byte[] value) {
    ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("payments", 2, 41L, null, null);
    if (value != null) {
      record.headers().add(KeyExtractor.DEFAULT_HEADER, value);
    }
    return record;
  }

  private static String keyOf(ConsumerRecord<byte[], byte[]> record) throws Exception {
    return KeyExtractor.<byte[], byte[]>headerOrCoordinates().keyOf(record);
  }

  @Test
  void anAsciiHeaderIsTheKey() throws Exception {
    assertThat(keyOf(withHeader("pay-17".getBytes(StandardCharsets.US_ASCII)))).isEqualTo("pay-17");
  }

  @Test
  void aHeaderInMultiByteUtf8IsDecoded() throws Exception {
    assertThat(keyOf(withHeader("zahlung-ü-€-😀".getBytes(StandardCharsets.UTF_8))))
        .isEqualTo("zahlung-ü-€-😀");
  }

  @Test
  void aHeaderThatIsNotUtf8RejectsTheRecord() {
    // Latin-1 'ü' alone, a truncated three-byte sequence, and an encoded surrogate
    for (byte[] bytes :
        new byte[][] {
          {'k', (byte) 0xFC},
          {'k', (byte) 0xE2, (byte) 0x82},
          {(byte) 0xED, (byte) 0xA0, (byte) 0x80}
        }) {
      assertThatThrownBy(() -> keyOf(withHeader(bytes)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("the 'idempotency-key' header is not valid UTF-8");
    }
  }

  @Test
  void withoutTheHeaderTheCoordinatesAreTheKey() throws Exception {
    assertThat(keyOf(withHeader(null))).isEqualTo("payments-2@41");
  }
}
