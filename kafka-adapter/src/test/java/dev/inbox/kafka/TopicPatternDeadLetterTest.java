package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.kafka.spi.KafkaConsumerListener;
import dev.inbox.spi.MessageOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * A loop subscribed with {@code topicPattern} dead-letters to {@code <topic>.DLT} by default, and a
 * pattern such as {@code payments.*} matches that topic too: it must not consume its own dead
 * letters (it would dead-letter them again, to {@code payments.DLT.DLT}, and on to Kafka's limit on
 * topic names, running the handler again for each copy of a retryable failure's letter). With a
 * naming of its own that the pattern matches, it refuses to dead-letter there, and says why.
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

  @Test
  void a_pattern_that_matches_a_dead_letter_topic_of_a_custom_naming_refuses_to_feed_it()
      throws Exception {
    String topic = kafka.newTopic("pattern-custom", 1);
    String dead = topic + "-dead";
    // Both exist from the start, so that a letter read back would be dead-lettered again at once.
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin
          .createTopics(
              List.of(new NewTopic(dead, 1, (short) 1), new NewTopic(dead + "-dead", 1, (short) 1)))
          .all()
          .get();
    }
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    ProducerRecord<String, String> blankKey = new ProducerRecord<>(topic, "blank", "5");
    blankKey.headers().add("idempotency-key", " ".getBytes(StandardCharsets.UTF_8));
    sendAll(List.of(blankKey));

    Map<String, Map<MessageOutcome, Integer>> outcomes = new ConcurrentHashMap<>();
    Map<String, Object> properties = new HashMap<>(consumerProperties(group));
    properties.put("metadata.max.age.ms", 1000);
    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox, topic, group)
            .properties(properties)
            .topicPattern(Pattern.compile(Pattern.quote(topic) + ".*"))
            .deadLetterTopic(original -> original + "-dead")
            .listener(
                new KafkaConsumerListener() {
                  @Override
                  public void records(String read, MessageOutcome outcome, int count) {
                    outcomes
                        .computeIfAbsent(read, t -> new ConcurrentHashMap<>())
                        .merge(outcome, count, Integer::sum);
                  }
                })
            .handler((record, tx) -> effects.apply(tx, record.key(), 5))
            .build()
            .start();
    closeables.add(consumer);
    await(
        "the blank key to be refused a dead letter, or its letter to be read back",
        Duration.ofSeconds(60),
        () ->
            outcomes.getOrDefault(topic, Map.of()).containsKey(MessageOutcome.DEAD_LETTER_FAILED)
                || outcomes.containsKey(dead));

    assertThat(outcomes.get(dead))
        .as("records the loop read back from its own dead-letter topic " + dead)
        .isNull();
    assertThat(endOffset(dead)).as("letters published to " + dead).isZero();
    assertThat(effects.count()).isZero();
  }

  @Test
  void a_custom_dead_letter_topic_the_pattern_matches_is_refused_naming_both() {
    DeadLetterTopics topics =
        new DeadLetterTopics(Pattern.compile("payments.*"), topic -> topic + "-dead");
    assertThat(topics.apply("orders")).isEqualTo("orders-dead");
    assertThatThrownBy(() -> topics.apply("payments"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'payments-dead'")
        .hasMessageContaining("'payments.*'")
        .hasMessageContaining("'payments'");
  }

  @Test
  void a_listed_topic_that_is_the_dead_letter_topic_of_another_is_refused_at_build() {
    assertThatThrownBy(
            () ->
                InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
                    .properties(consumerProperties(newGroup()))
                    .topics("payments", "payments.DLT")
                    .inbox(inbox(settings().build()))
                    .handler((record, tx) -> {})
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'payments.DLT'");
  }

  private long endOffset(String topic) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      TopicPartition partition = new TopicPartition(topic, 0);
      return admin
          .listOffsets(Map.of(partition, OffsetSpec.latest()))
          .partitionResult(partition)
          .get()
          .offset();
    }
  }
}
