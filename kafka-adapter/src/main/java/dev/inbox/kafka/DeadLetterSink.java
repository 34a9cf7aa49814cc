package dev.inbox.kafka;

/**
 * Where dead letters go. {@link #publish} must return only once the dead letter is durable (for a
 * Kafka topic: acknowledged by the broker), because the record's offset is committed right after.
 */
@FunctionalInterface
public interface DeadLetterSink<K, V> {
  void publish(DeadLetter<K, V> deadLetter) throws Exception;
}
