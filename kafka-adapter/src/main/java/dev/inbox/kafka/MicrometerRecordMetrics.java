package dev.inbox.kafka;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * {@code inbox.kafka.records} (counter; tags topic, outcome) and {@code inbox.kafka.batch.latency}
 * (timer): one poll's records, from the first claim to the offset commit.
 */
final class MicrometerRecordMetrics implements RecordMetrics {
  private final MeterRegistry registry;
  private final Timer batchLatency;

  MicrometerRecordMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.batchLatency =
        Timer.builder("inbox.kafka.batch.latency")
            .description("One polled batch, from the claims to the offset commit")
            .register(registry);
  }

  @Override
  public void records(String topic, String outcome, int count) {
    if (count > 0) {
      Counter.builder("inbox.kafka.records")
          .description("Records by outcome")
          .tag("topic", topic)
          .tag("outcome", outcome)
          .register(registry)
          .increment(count);
    }
  }

  @Override
  public void batch(Duration latency) {
    batchLatency.record(latency);
  }
}
