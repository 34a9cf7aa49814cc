package dev.inbox.rabbit.micrometer;

import dev.inbox.rabbit.spi.RabbitConsumerListener;
import dev.inbox.spi.MessageOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Publishes the RabbitMQ consumer's deliveries as Micrometer meters.
 *
 * <ul>
 *   <li>{@code inbox.rabbit.deliveries} (counter; tags queue, outcome = {@link
 *       MessageOutcome#tag()}: new, duplicate, failed, dead_lettered, dead_letter_failed)
 *   <li>{@code inbox.rabbit.batch.latency} (timer; tag queue): one batch, from the claim to the
 *       last ack
 * </ul>
 */
public final class MicrometerRabbitConsumerListener implements RabbitConsumerListener {
  private final MeterRegistry registry;

  public MicrometerRabbitConsumerListener(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void deliveries(String queue, MessageOutcome outcome, int count) {
    Counter.builder("inbox.rabbit.deliveries")
        .description("Deliveries by outcome")
        .tag("queue", queue)
        .tag("outcome", outcome.tag())
        .register(registry)
        .increment(count);
  }

  @Override
  public void batch(String queue, Duration latency) {
    Timer.builder("inbox.rabbit.batch.latency")
        .description("One batch, from the claim to the last ack")
        .tag("queue", queue)
        .register(registry)
        .record(latency);
  }
}
