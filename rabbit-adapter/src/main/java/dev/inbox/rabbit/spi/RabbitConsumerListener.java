package dev.inbox.rabbit.spi;

import dev.inbox.spi.MessageOutcome;
import java.time.Duration;

/**
 * Receives what {@link dev.inbox.rabbit.InboxRabbitConsumer} does, for metrics. Every method is a
 * no-op by default and is called on the consumer's worker thread, so it must be fast. An exception
 * it throws is logged and ignored ({@link dev.inbox.spi.Listeners#nonThrowing}): it never stops the
 * consumer or changes what happens to a delivery.
 */
public interface RabbitConsumerListener {
  /** A listener that ignores everything. */
  RabbitConsumerListener NOOP = new RabbitConsumerListener() {};

  /** {@code count} deliveries (at least 1) of {@code queue} ended with {@code outcome}. */
  default void deliveries(String queue, MessageOutcome outcome, int count) {}

  /** One batch of {@code queue} took {@code latency}, from the claim to the last ack. */
  default void batch(String queue, Duration latency) {}
}
