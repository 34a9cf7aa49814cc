package dev.inbox;

import java.sql.Connection;

/**
 * The work done once per key, inside the inbox's transaction. Write through the given connection,
 * so that the writes commit together with the record, or not at all. Never commit, roll back or
 * close it.
 */
@FunctionalInterface
public interface TransactionalHandler {
  /**
   * @return the result to store and replay to duplicates, or null to store none
   */
  StoredResult handle(Connection transaction) throws Exception;
}
