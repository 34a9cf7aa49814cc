package dev.inbox.examples;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;

/** The one configuration of the examples' and the benchmarks' Kafka producers. */
public final class KafkaProducers {
  private KafkaProducers() {}

  /**
   * Idempotent, {@code acks=all}, and one request in flight per connection. With more in flight
   * (the client's default is five), a batch that fails with a retriable error, such as
   * NOT_LEADER_OR_FOLLOWER on a new topic or while a broker restarts, can be overtaken by the next
   * batch; the broker then refuses the retried batch as OUT_OF_ORDER_SEQUENCE_NUMBER until the
   * delivery timeout, and its payments are lost (KAFKA-14359). One in flight keeps every retry
   * ahead of what follows it. Add serializers or settings to a copy.
   */
  public static Map<String, Object> config(String bootstrapServers) {
    return Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrapServers,
        ProducerConfig.ACKS_CONFIG,
        "all",
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
        true,
        ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
        1,
        ProducerConfig.LINGER_MS_CONFIG,
        5);
  }
}
