package dev.inbox.kafka.spi;

import dev.inbox.spi.MessageOutcome;
import java.time.Duration;

/**
 * Receives what {@link dev.inbox.kafka.InboxKafkaConsumer} and {@link
 * dev.inbox.kafka.InboxRecordProcessor} do, for metrics. Every method is a no-op by default and is
 * called on the loop's thread, so it must be fast. An exception it throws is logged and ignored
 * ({@link dev.inbox.spi.Listeners#nonThrowing}): it never stops the loop or changes what happens to
 * a record.
 */
public interface KafkaConsumerListener {
  /** A listener that ignores everything. */
  KafkaConsumerListener NOOP = new KafkaConsumerListener() {};

  /** {@code count} records (at least 1) of {@code topic} ended with {@code outcome}. */
  default void records(String topic, MessageOutcome outcome, int count) {}

  /** One poll's records took {@code latency}, from the first claim to the offset commit. */
  default void batch(Duration latency) {}
}
