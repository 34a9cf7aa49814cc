package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.testing.HalfSentParameter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A handler whose JDBC parameter stream throws an Error half-way through the statement leaves the
 * driver's message half-sent; the consumer still dead-letters that record after maxAttempts and
 * applies the others.
 */
class HandlerThrowingMidStatementTest extends KafkaTestSupport {

  @Test
  void theRecordIsDeadLetteredAfterMaxAttemptsAndTheOthersTakeEffect() throws Exception {
    String topic = kafka.newTopic("mid-statement", 1);
    String group = newGroup();
    sendAll(
        List.of(
            withKey(topic, "ok-1", "1"), withKey(topic, "blob", "7"), withKey(topic, "ok-2", "2")));
    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox(settings().maxAttempts(2).build()), topic, group)
            .retryBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .handler(
                (record, tx) -> {
                  if (record.key().equals("blob")) {
                    HalfSentParameter.sendRunningOutOfMemory(tx);
                  }
                  effects.apply(tx, record.key(), Long.parseLong(record.value()));
                })
            .build()
            .start();
    closeables.add(consumer);

    awaitFullyCommitted(group, topic, Duration.ofSeconds(120));
    assertThat(effects.count()).as("effects of ok-1 and ok-2").isEqualTo(2);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 1);
    assertThat(letters).containsOnlyKeys("blob");
    assertThat(letters.get("blob"))
        .containsEntry(DeadLetterHeaders.REASON, "gave_up")
        .containsEntry(DeadLetterHeaders.EXCEPTION_CLASS, "java.lang.OutOfMemoryError");
    assertThat(consumer.isRunning()).isTrue();
  }
}
