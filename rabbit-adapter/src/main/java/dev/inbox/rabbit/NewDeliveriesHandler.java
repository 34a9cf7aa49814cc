package dev.inbox.rabbit;

import com.rabbitmq.client.Delivery;
import java.sql.Connection;
import java.util.List;

/**
 * The work done once per batch for all of its new deliveries together, inside the inbox's
 * transaction, so that it can write them with set-based statements (one multi-row {@code INSERT},
 * one {@code UPDATE ... FROM unnest(...)}) instead of statements per delivery. Write through the
 * given connection; never commit, roll back or close it.
 *
 * <p>If it throws, its writes are rolled back and it is called again with one delivery at a time,
 * so that only the failing delivery is requeued (or dead-lettered, once it has used up {@code
 * maxAttempts}) and the others take effect. It must therefore be correct for any subset of the new
 * deliveries, and have no effects outside the transaction. Deliveries without a key, when processed
 * without deduplication, also come one at a time. See {@link dev.inbox.BatchHandler#setBased},
 * which it is built on.
 */
@FunctionalInterface
public interface NewDeliveriesHandler {
  /**
   * @param newDeliveries the deliveries whose keys this batch claimed, in delivery order, each key
   *     once; never empty
   */
  void handle(List<Delivery> newDeliveries, Connection transaction) throws Exception;
}
