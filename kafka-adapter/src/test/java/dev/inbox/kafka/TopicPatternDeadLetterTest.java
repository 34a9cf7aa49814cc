package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * A loop subscribed with {@code topicPattern} dead-letters to {@code <topic>.DLT} by default, and a
 * pattern such as {@code payments.*} matches that topic too: it must not consume its own dead
 * letters (it would dead-letter them again, to {@code payments.DLT.DLT}, and on to Kafka's limit on
 * topic names, running the handler again for each copy of a retryable failure's letter).
 */
class TopicPatternDeadLetterTest extends KafkaTestSupport {

  @Test
  void a_pattern_subscription_does_not_consume_its_own_dead_letters() throws Exception {
    String topic = kafka.newTopic("pattern", 1);
    // The dead-letter topic exists from the start (as operators usually create it), so that the
    // first metadata the consumer sees already matches it; no metadata refresh is waited for.
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(topic + ".DLT", 1, (short) 1))).all().get();
    }
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    ProducerRecord<String, String> blankKey = new ProducerRecord<>(topic, "blank", "5");
    blankKey.headers().add("idempotency-key", " ".getBytes(StandardCharsets.UTF_8));
    sendAll(List.of(blankKey));

    Map<String, Object> properties = new HashMap<>(consumerProperties(group));
    properties.put("metadata.max.age.ms", 1000);
    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox, topic, group)
            .properties(properties)
            .topicPattern(Pattern.compile(Pattern.quote(topic) + ".*"))
            .handler((record, tx) -> effects.apply(tx, record.key(), 5))
            .build()
            .start();
    closeables.add(consumer);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    assertThat(readDeadLetters(topic + ".DLT", 1).get("blank"))
        .containsEntry(DeadLetterHeaders.REASON, "invalid_key");

    Map<String, Map<String, String>> again = readDeadLetters(topic + ".DLT.DLT", 1);
    assertThat(again)
        .as("dead letters of the loop's own dead letters, in " + topic + ".DLT.DLT")
        .isEmpty();
  }
}
