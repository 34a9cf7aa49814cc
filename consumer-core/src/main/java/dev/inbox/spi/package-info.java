/**
 * Extension points: implement {@link dev.inbox.spi.InboxListener} to observe claims, handlers,
 * batches and purges. {@link dev.inbox.spi.MessageOutcome} is the words in which the Kafka and
 * RabbitMQ consumers' listeners report each message, and {@link dev.inbox.spi.Listeners} keeps any
 * listener's exception out of the work it observes.
 */
package dev.inbox.spi;
