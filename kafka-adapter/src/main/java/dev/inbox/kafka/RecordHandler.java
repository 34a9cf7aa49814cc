package dev.inbox.kafka;

import java.sql.Connection;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The work done once per new record, inside the inbox's transaction. Write through the given
 * connection so that the writes commit together with the record's key. Never commit, roll back or
 * close it. Throw to retry the record; throw {@link dev.inbox.NonRetryableException} to dead-letter
 * it at once.
 */
@FunctionalInterface
public interface RecordHandler<K, V> {
  void handle(ConsumerRecord<K, V> record, Connection transaction) throws Exception;
}
