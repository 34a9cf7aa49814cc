/**
 * Test fixtures shared by every module: where a test finds PostgreSQL (and, from the adapters,
 * Kafka and RabbitMQ). The order is always an explicit setting, then Testcontainers when Docker is
 * present, then the service on this machine.
 */
package dev.inbox.testing;
