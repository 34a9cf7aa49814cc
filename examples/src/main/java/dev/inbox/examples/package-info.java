/**
 * Runnable examples in one jar, one picocli subcommand per feature: the demo, a KRaft broker,
 * producers and consumers for Kafka and RabbitMQ, and a payments API, all on one payments database.
 */
package dev.inbox.examples;
