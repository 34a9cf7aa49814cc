package dev.inbox.kafka.micrometer;

import dev.inbox.kafka.spi.KafkaConsumerListener;
import dev.inbox.spi.MessageOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Publishes the Kafka consumer's records as Micrometer meters.
 *
 * <ul>
 *   <li>{@code inbox.kafka.records} (counter; tags topic, outcome = {@link MessageOutcome#tag()}:
 *       new, duplicate, failed, dead_lettered, dead_letter_failed)
 *   <li>{@code inbox.kafka.batch.latency} (timer): one poll's records, from the first claim to the
 *       offset commit
 * </ul>
 */
public final class MicrometerKafkaConsumerListener implements KafkaConsumerListener {
  private final MeterRegistry registry;
  private final Timer batchLatency;

  public MicrometerKafkaConsumerListener(MeterRegistry registry) {
    this.registry = registry;
    this.batchLatency =
        Timer.builder("inbox.kafka.batch.latency")
            .description("One polled batch, from the claims to the offset commit")
            .register(registry);
  }

  @Override
  public void records(String topic, MessageOutcome outcome, int count) {
    Counter.builder("inbox.kafka.records")
        .description("Records by outcome")
        .tag("topic", topic)
        .tag("outcome", outcome.tag())
        .register(registry)
        .increment(count);
  }

  @Override
  public void batch(Duration latency) {
    batchLatency.record(latency);
  }
}
