package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * Dead letters that only Kafka makes: of a record its deserializer refuses, and of a key header
 * that is not UTF-8. A poison record, a non-retryable failure and invalid keys are in {@link
 * KafkaAcceptanceTest}.
 */
class DeadLetterTest extends KafkaTestSupport {

  /** Amounts as decimal text; anything else cannot be deserialized. */
  private static final Deserializer<Long> AMOUNTS =
      (topic, data) -> {
        try {
          return Long.parseLong(new String(data, StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
          throw new SerializationException("not an amount: " + e.getMessage());
        }
      };

  @Test
  void undeserializableRecordsAndKeyHeadersThatAreNotUtf8GoToTheDltAndTheRestTakeEffect()
      throws Exception {
    String topic = kafka.newTopic("poison", 1);
    String group = newGroup();
    List<ProducerRecord<String, String>> records = new ArrayList<>();
    long expectedSum = 0;
    for (int i = 0; i < 300; i++) {
      records.add(withKey(topic, "ok-" + i, Long.toString(i + 1)));
      expectedSum += i + 1;
      if (i == 100) {
        records.add(withKey(topic, "garbage-1", "not a number"));
      } else if (i == 200) {
        ProducerRecord<String, String> badUtf8 = new ProducerRecord<>(topic, "k", "5");
        badUtf8.headers().add("idempotency-key", new byte[] {(byte) 0xC3, (byte) 0x28});
        records.add(badUtf8);
      }
    }
    sendAll(records);

    InboxKafkaConsumer<String, Long> consumer =
        InboxKafkaConsumer.builder(new StringDeserializer(), AMOUNTS)
            .properties(consumerProperties(group))
            .topics(topic)
            .inbox(inbox(settings().build()))
            .handler((record, tx) -> effects.apply(tx, record.key(), record.value()))
            .build()
            .start();
    closeables.add(consumer);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).isEqualTo(300);
    assertThat(effects.sum()).isEqualTo(expectedSum);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 2);
    assertThat(letters).hasSize(2);
    assertThat(letters.get("garbage-1"))
        .containsEntry(DeadLetterHeaders.REASON, "undeserializable")
        .containsEntry(DeadLetterHeaders.EXCEPTION_CLASS, SerializationException.class.getName())
        .containsEntry(DeadLetterHeaders.ATTEMPTS, "0")
        .containsEntry(KafkaDeadLetterPublisher.ORIGINAL_TOPIC, topic)
        .containsEntry(KafkaDeadLetterPublisher.ORIGINAL_PARTITION, "0")
        .containsEntry(KafkaDeadLetterPublisher.ORIGINAL_OFFSET, "101");
    assertThat(letters.get("garbage-1").get(DeadLetterHeaders.DETAIL))
        .contains("cannot deserialize the value");
    assertThat(letters.get("k").get(DeadLetterHeaders.REASON)).isEqualTo("invalid_key");
    assertThat(letters.get("k").get(DeadLetterHeaders.EXCEPTION_MESSAGE))
        .isEqualTo("the 'idempotency-key' header is not valid UTF-8");
  }

  /**
   * A recursive-descent deserializer overflows its stack on a deeply nested value: that record is
   * undeserializable like any other, and neither the record before it nor the loop suffers.
   */
  @Test
  void aDeserializerThatThrowsAnErrorDeadLettersTheRecordAndTheLoopGoesOn() throws Exception {
    String topic = kafka.newTopic("deserializer-error", 1);
    String group = newGroup();
    sendAll(
        List.of(
            withKey(topic, "ok-1", "1"),
            withKey(topic, "nested", "[".repeat(100_000)),
            withKey(topic, "ok-2", "2")));
    Deserializer<String> nesting = (t, data) -> nest(new String(data, StandardCharsets.UTF_8), 0);
    InboxKafkaConsumer<String, String> consumer =
        InboxKafkaConsumer.builder(new StringDeserializer(), nesting)
            .properties(consumerProperties(group))
            .topics(topic)
            .inbox(inbox(settings().build()))
            .handler(
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())))
            .build()
            .start();
    closeables.add(consumer);
    await(
        "2 effects, or the loop to stop",
        Duration.ofSeconds(60),
        () -> effects.count() == 2 || !consumer.isRunning());
    assertThat(consumer.failure()).as("what stopped the loop").isEmpty();
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(2);
    assertThat(effects.sum()).as("sum").isEqualTo(3);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 1);
    assertThat(letters).hasSize(1);
    assertThat(letters.get("nested"))
        .containsEntry(DeadLetterHeaders.REASON, "undeserializable")
        .containsEntry(DeadLetterHeaders.EXCEPTION_CLASS, StackOverflowError.class.getName());
    assertThat(consumer.isRunning()).isTrue();
  }

  /** Parses leading brackets one call deep each, as a recursive-descent parser does. */
  private static String nest(String text, int at) {
    return at < text.length() && text.charAt(at) == '['
        ? "[" + nest(text, at + 1)
        : text.substring(at);
  }
}
