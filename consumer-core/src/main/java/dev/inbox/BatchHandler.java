package dev.inbox;

import java.sql.Connection;

/**
 * The work done once per new item of a batch, inside the batch's transaction. Never commit, roll
 * back or close the connection.
 *
 * @param <T> the payload type
 */
@FunctionalInterface
public interface BatchHandler<T> {
  /**
   * @return the result to store and replay to duplicates, or null to store none
   */
  StoredResult handle(BatchItem<T> item, Connection transaction) throws Exception;
}
