/**
 * Micrometer meters for the Kafka adapter ({@code inbox.kafka.*}); {@link
 * dev.inbox.kafka.InboxKafkaConsumer.Builder#meterRegistry} installs them together with Kafka's own
 * client metrics.
 */
package dev.inbox.kafka.micrometer;
