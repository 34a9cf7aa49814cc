package dev.inbox.spi;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Consumer;

/**
 * Tells the inbox whether the calling thread already holds a database transaction that the inbox
 * must join, so that a handler's repository writes commit with its key: Spring's
 * {@code @Transactional} (through {@code DataSourceUtils.getConnection}), a jOOQ or JPA transaction
 * bound to the thread.
 *
 * <p>When {@link #current()} returns a connection, {@code execute} and {@code executeBatch} (and so
 * the Kafka and RabbitMQ consumers and the HTTP filter) run their claim and handler on it, under a
 * savepoint: a failing handler is rolled back to the savepoint and its attempt counted on a
 * connection of the inbox's own, and the inbox never commits, rolls back or closes the caller's
 * connection. The caller's commit then commits the key with the writes; its rollback leaves the key
 * as it was. When it returns null, the inbox begins a transaction of its own on its data source.
 *
 * <p>A failed attempt must be seen by a later claim of the key in the same transaction and survive
 * the caller's rollback. An implementation that can run work after the caller's transaction rolled
 * back ({@link #runAfterRollback}; Spring's does) gets it counted inside the caller's transaction
 * and, should that roll back, again afterwards on the caller's own connection, in a short
 * transaction of its own: no second connection is needed. Otherwise the count takes a second
 * connection of the inbox's data source at once, while the caller still holds its own: size the
 * pool for one connection more than the callers that can fail at the same time, since with none
 * free the count waits for the pool's connection timeout and is then dropped (logged), and the key
 * gets one more attempt than {@code maxAttempts}. The handler runs on the caller's connection
 * behind a guard that refuses {@code commit()}, {@code rollback()} and {@code close()}: the caller
 * ends its transaction. A handler whose failure breaks the connection gets it aborted, as the inbox
 * does with its own.
 */
@FunctionalInterface
public interface CallerTransactions {

  /** Never joins: the inbox always begins its own transaction. The default. */
  CallerTransactions NONE = () -> null;

  /**
   * The connection of the transaction the calling thread holds, or null when it holds none. It must
   * reach the inbox's database, with auto-commit off.
   */
  Connection current() throws SQLException;

  /**
   * Runs {@code work} on the connection of the calling thread's transaction if, and once, that
   * transaction has rolled back (or ended with an unknown outcome), before the connection goes back
   * to its pool; the work commits what it writes itself. Returns false, having arranged nothing,
   * when this implementation cannot (the default), and the inbox then uses a connection of its own.
   */
  default boolean runAfterRollback(Consumer<Connection> work) {
    return false;
  }
}
