package dev.inbox.rabbit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * {@code inbox.rabbit.deliveries} (counter; tags queue, outcome = new, duplicate, failed,
 * dead_lettered, dead_letter_failed) and {@code inbox.rabbit.batch.latency} (timer; tag queue).
 */
final class DeliveryMetrics {
  private final MeterRegistry registry;
  private final String queue;

  DeliveryMetrics(MeterRegistry registry, String queue) {
    this.registry = registry;
    this.queue = queue;
  }

  void count(String outcome, int count) {
    if (registry != null && count > 0) {
      Counter.builder("inbox.rabbit.deliveries")
          .tag("queue", queue)
          .tag("outcome", outcome)
          .register(registry)
          .increment(count);
    }
  }

  void batch(Duration latency) {
    if (registry != null) {
      Timer.builder("inbox.rabbit.batch.latency")
          .tag("queue", queue)
          .register(registry)
          .record(latency);
    }
  }
}
