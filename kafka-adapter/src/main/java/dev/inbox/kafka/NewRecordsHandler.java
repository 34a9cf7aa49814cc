package dev.inbox.kafka;

import java.sql.Connection;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The work done once per partition of a poll for all of its new records together, inside the
 * inbox's transaction, so that it can write them with set-based statements (one multi-row {@code
 * INSERT}, one {@code UPDATE ... FROM unnest(...)}) instead of statements per record. Write through
 * the given connection; never commit, roll back or close it.
 *
 * <p>If it throws, its writes are rolled back and it is called again with one record at a time, in
 * offset order, so that only the failing record is retried (or dead-lettered, when it throws {@link
 * dev.inbox.NonRetryableException} or runs out of attempts) and no later record of its partition
 * takes effect before it. It must therefore be correct for any run of the new records, and have no
 * effects outside the transaction. See {@link dev.inbox.BatchHandler#setBased}, which it is built
 * on.
 */
@FunctionalInterface
public interface NewRecordsHandler<K, V> {
  /**
   * @param newRecords the records whose keys this batch claimed, in offset order, each key once;
   *     never empty
   */
  void handle(List<ConsumerRecord<K, V>> newRecords, Connection transaction) throws Exception;
}
