package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.testing.PaymentStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/** The set-based handler: one call per partition of a poll for all of its new records. */
class NewRecordsHandlerTest extends KafkaTestSupport {

  @Test
  void resentRecordsTakeEffectOnceThroughOneCallPerBatch() throws Exception {
    String topic = kafka.newTopic("at-once", 3);
    String group = newGroup();
    PaymentStream stream = new PaymentStream("a", 8_000, 2_000, 11);
    PaymentSender.send(stream, kafka.bootstrapServers(), topic);
    Inbox inbox = inbox(settings().build());
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger largestCall = new AtomicInteger();

    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox, topic, group)
            .newRecordsHandler(
                (records, tx) -> {
                  calls.incrementAndGet();
                  largestCall.accumulateAndGet(records.size(), Math::max);
                  applyAll(records, tx);
                })
            .build()
            .start();
    closeables.add(consumer);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertExactlyOnce(stream);
    assertThat(largestCall.get()).as("records in the largest call").isGreaterThan(1);
    assertThat(calls.get()).as("calls").isLessThan(8_000);
  }

  @Test
  void aFailingCallIsRunAgainRecordByRecordSoThatOnlyThePoisonIsDeadLettered() throws Exception {
    String topic = kafka.newTopic("at-once-poison", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().maxAttempts(3).build());
    List<ProducerRecord<String, String>> records = new ArrayList<>();
    long expectedSum = 0;
    for (int i = 0; i < 300; i++) {
      records.add(withKey(topic, "ok-" + i, Long.toString(i + 1)));
      expectedSum += i + 1;
      if (i == 40) {
        records.add(withKey(topic, "failing-1", "-1"));
      } else if (i == 200) {
        records.add(withKey(topic, "rejected-1", "-2"));
      }
    }
    records.add(withKey(topic, "ok-7", "8")); // a re-send, within the same poll or a later one
    sendAll(records);

    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox, topic, group)
            .retryBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .newRecordsHandler(
                (batch, tx) -> {
                  for (ConsumerRecord<String, String> record : batch) {
                    // As a set-based statement would: one bad row fails the whole call.
                    if (record.value().equals("-1")) {
                      throw new IllegalStateException("cannot apply a negative payment");
                    }
                    if (record.value().equals("-2")) {
                      throw new NonRetryableException("the account is closed");
                    }
                  }
                  applyAll(batch, tx);
                })
            .build()
            .start();
    closeables.add(consumer);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).isEqualTo(300);
    assertThat(effects.distinctKeys()).isEqualTo(300);
    assertThat(effects.sum()).isEqualTo(expectedSum);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 2);
    assertThat(letters).hasSize(2);
    assertThat(letters.get("failing-1"))
        .containsEntry(DeadLetterHeaders.REASON, "gave_up")
        .containsEntry(DeadLetterHeaders.ATTEMPTS, "3")
        .containsEntry(DeadLetterHeaders.EXCEPTION_MESSAGE, "cannot apply a negative payment");
    assertThat(letters.get("rejected-1"))
        .containsEntry(DeadLetterHeaders.REASON, "non_retryable")
        .containsEntry(DeadLetterHeaders.ATTEMPTS, "1")
        .containsEntry(DeadLetterHeaders.EXCEPTION_MESSAGE, "the account is closed");
  }

  @Test
  void theBuilderTakesExactlyOneHandler() {
    var builder =
        InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
            .properties(Map.of("bootstrap.servers", "127.0.0.1:1", "group.id", "g"))
            .topics("t")
            .inbox(inbox(settings().build()));
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("set handler(...) or newRecordsHandler(...)");
    builder.handler((record, tx) -> {}).newRecordsHandler((records, tx) -> {});
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not both");
  }

  private void applyAll(List<ConsumerRecord<String, String>> records, Connection tx)
      throws Exception {
    List<String> keys = new ArrayList<>();
    List<Long> amounts = new ArrayList<>();
    for (ConsumerRecord<String, String> record : records) {
      keys.add(
          new String(
              record.headers().lastHeader("idempotency-key").value(), StandardCharsets.UTF_8));
      amounts.add(Long.parseLong(record.value()));
    }
    effects.applyAll(tx, keys, amounts);
  }
}
