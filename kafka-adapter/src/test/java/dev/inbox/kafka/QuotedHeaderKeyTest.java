package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * A gateway that copies a client's {@code Idempotency-Key: "q-1"} into a record's {@code
 * idempotency-key} header sends the draft's quoted string. Over HTTP that is the key {@code q-1};
 * the consumer must record the same key, or one payment sent over both takes effect twice.
 */
class QuotedHeaderKeyTest extends KafkaTestSupport {

  @Test
  void a_quoted_header_key_is_the_key_http_records_and_the_payment_takes_effect_once()
      throws Exception {
    String topic = kafka.newTopic("quoted", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    closeables.add(
        consumer(inbox, topic, group)
            .scope("tenant-a")
            .handler((record, tx) -> effects.apply(tx, "q", Long.parseLong(record.value())))
            .build()
            .start());
    ProducerRecord<String, String> record = new ProducerRecord<>(topic, "q", "100");
    record.headers().add("idempotency-key", "\"q-1\"".getBytes(StandardCharsets.UTF_8));
    sendAll(List.of(record));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    // What IdempotencyFilter records for the same header over HTTP: the key q-1.
    inbox.execute(
        "tenant-a",
        "q-1",
        tx -> {
          effects.apply(tx, "q", 100);
          return null;
        });

    assertThat(effects.count()).as("effects of one payment over Kafka and HTTP").isEqualTo(1);
    assertThat(inbox.admin().find("tenant-a", "\"q-1\"")).as("the key with its quotes").isEmpty();
  }
}
