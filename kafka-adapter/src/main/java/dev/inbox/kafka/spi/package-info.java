/**
 * Extension points of the Kafka adapter: a {@link dev.inbox.kafka.spi.KafkaConsumerListener}
 * receives each record's {@link dev.inbox.spi.MessageOutcome} and each poll's latency, for metrics
 * of your own.
 */
package dev.inbox.kafka.spi;
