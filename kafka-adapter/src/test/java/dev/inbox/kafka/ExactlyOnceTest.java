package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.kafka.micrometer.MicrometerKafkaConsumerListener;
import dev.inbox.testing.PaymentStream;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * Exactly-once effects in what only Kafka does: a rebalance while records flow, and a poll loop of
 * the application's own. The scenarios every broker shares are in {@link KafkaAcceptanceTest}.
 */
class ExactlyOnceTest extends KafkaTestSupport {

  @Test
  void twoConsumersAndAThirdJoiningMidStreamTakeEachEffectOnce() throws Exception {
    String topic = kafka.newTopic("rebalance", 6);
    String group = newGroup();
    PaymentStream stream = new PaymentStream("r", 12_000, 3_000, 7);
    Inbox inbox = inbox(settings().build());
    // All three report to one registry: which of them gets partitions, and when, is the group's
    // choice (on a busy machine the first may get none before the others take them all).
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    startMetered(inbox, topic, group, registry);
    startMetered(inbox, topic, group, registry);
    PaymentSender.send(stream, kafka.bootstrapServers(), topic);
    await("a quarter of the effects", Duration.ofSeconds(60), () -> effects.count() >= 3_000);
    startMetered(inbox, topic, group, registry);

    awaitFullyCommitted(group, topic, Duration.ofSeconds(90));
    assertExactlyOnce(stream);
    assertThat(registry.find("inbox.kafka.batch.latency").timer().count()).isPositive();
    assertThat(registry.find("kafka.consumer.fetch.manager.records.consumed.total").meters())
        .as("Kafka's client metrics are bound")
        .isNotEmpty();
  }

  private void startMetered(Inbox inbox, String topic, String group, SimpleMeterRegistry registry) {
    closeables.add(
        consumer(inbox, topic, group)
            .meterRegistry(registry)
            .handler(
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())))
            .build()
            .start());
  }

  @Test
  void ownPollLoopCommitsOnlyProcessedOffsets() throws Exception {
    String topic = kafka.newTopic("ownloop", 2);
    String group = newGroup();
    PaymentStream stream = new PaymentStream("o", 800, 200, 3);
    PaymentSender.send(stream, kafka.bootstrapServers(), topic);
    Inbox inbox = inbox(settings().build());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    InboxRecordProcessor<String, String> processor =
        InboxRecordProcessor.<String, String>create(
                inbox,
                group,
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())),
                deadLetter -> {
                  throw new AssertionError("nothing should be dead-lettered: " + deadLetter);
                })
            .withListener(new MicrometerKafkaConsumerListener(registry));
    java.util.Map<String, Object> properties = new java.util.HashMap<>(consumerProperties(group));
    properties.put("enable.auto.commit", "false");
    try (var consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(
            properties, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(java.util.List.of(topic));
      // Every record is read twice: once for real, once after seeking back to the beginning.
      long polledRecords = 0;
      boolean rewound = false;
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (polledRecords < 2L * stream.messages().size() && System.nanoTime() < deadline) {
        var records = consumer.poll(Duration.ofMillis(200));
        polledRecords += records.count();
        ProcessedRecords done = processor.process(records);
        assertThat(done.retries()).isEmpty();
        consumer.commitSync(done.offsetsToCommit());
        if (!rewound && polledRecords >= stream.messages().size()) {
          consumer.seekToBeginning(consumer.assignment());
          rewound = true;
        }
      }
      assertThat(polledRecords).isEqualTo(2L * stream.messages().size());
    }
    assertExactlyOnce(stream);
    assertThat(count(registry, topic, "new")).isEqualTo(800);
    assertThat(count(registry, topic, "duplicate"))
        .as("200 re-sent, then 1 000 read again")
        .isEqualTo(1_200);
  }
}
