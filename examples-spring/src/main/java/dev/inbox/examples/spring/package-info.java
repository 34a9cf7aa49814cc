/**
 * The payments service on Spring Boot: the plain examples' payments applied through {@code
 * inbox-spring-boot-starter} by one {@code @KafkaListener}, one {@code @RabbitListener} and one
 * {@code @Idempotent} endpoint, in one key space; with an embedded KRaft broker for machines
 * without Kafka and a {@code --demo} that proves every payment takes effect once.
 */
package dev.inbox.examples.spring;
