/**
 * Extension points of the RabbitMQ adapter: a {@link dev.inbox.rabbit.spi.RabbitConsumerListener}
 * receives each delivery's {@link dev.inbox.spi.MessageOutcome} and each batch's latency, for
 * metrics of your own.
 */
package dev.inbox.rabbit.spi;
