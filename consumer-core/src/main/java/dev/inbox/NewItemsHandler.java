package dev.inbox;

import java.sql.Connection;
import java.util.List;

/**
 * The work done once per batch for all of its new items together, inside the batch's transaction,
 * so that it can write them with set-based statements (one multi-row {@code INSERT}, one {@code
 * UPDATE ... FROM unnest(...)}) instead of statements per item. Never commit, roll back or close
 * the connection.
 *
 * <p>If it throws, its writes are rolled back and the inbox calls it again with one item at a time,
 * each under a savepoint, so that only the failing item counts as failed. It must therefore be
 * correct for any sublist of the new items, and have no effects outside the transaction. Items it
 * completes store no result.
 *
 * @param <T> the payload type
 */
@FunctionalInterface
public interface NewItemsHandler<T> {
  /**
   * @param newItems the items whose keys this batch claimed, in batch order, each key once; never
   *     empty
   */
  void handle(List<BatchItem<T>> newItems, Connection transaction) throws Exception;
}
