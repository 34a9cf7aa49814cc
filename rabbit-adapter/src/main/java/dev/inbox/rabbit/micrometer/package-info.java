/**
 * Micrometer meters for the RabbitMQ adapter ({@code inbox.rabbit.*}); {@link
 * dev.inbox.rabbit.InboxRabbitConsumer.Builder#meterRegistry} installs them.
 */
package dev.inbox.rabbit.micrometer;
