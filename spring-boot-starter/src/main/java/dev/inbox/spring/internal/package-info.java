/**
 * How the starter puts the inbox around listener methods: transport hooks (a Kafka record or batch
 * interceptor, a RabbitMQ container advice) say what the container is delivering on this thread,
 * and one interceptor, placed just inside the method's {@code @Transactional}, claims its keys in
 * that transaction and completes them before it commits. Not an API: it may change in any release.
 */
package dev.inbox.spring.internal;
