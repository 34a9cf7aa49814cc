package dev.inbox.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns a connection for one transaction of the inbox's own: READ COMMITTED, auto-commit off, and
 * the connection handed back as it was found.
 */
final class Transactions {
  private static final Logger log = LoggerFactory.getLogger(Transactions.class);

  private Transactions() {}

  static Connection begin(DataSource dataSource) throws SQLException {
    Connection connection = dataSource.getConnection();
    try {
      connection.setAutoCommit(false);
      return connection;
    } catch (SQLException e) {
      closeQuietly(connection, e);
      throw e;
    }
  }

  /**
   * Commits, unless an SQL error aborted the transaction: PostgreSQL then answers COMMIT with a
   * rollback and pgjdbc reports no error, so a caller would take writes that never happened for
   * committed.
   *
   * @throws SQLException with SQLState 25P02 when the transaction was aborted; nothing committed
   */
  static void commit(Connection connection) throws SQLException {
    requireNotAborted(
        connection,
        "the transaction was aborted by an earlier SQL error, so COMMIT would only roll it back;"
            + " nothing was committed");
    connection.commit();
  }

  /**
   * Throws when the handler that just returned left its transaction aborted: it caught an SQL error
   * and carried on without rolling back to a savepoint, so none of its writes can commit.
   */
  static void requireNotAbortedByHandler(Connection connection) throws SQLException {
    requireNotAborted(
        connection,
        "the handler returned normally, but an SQL error it caught had aborted its transaction,"
            + " so none of its writes can commit; roll back to a savepoint after an error the"
            + " handler means to survive, or let the error propagate");
  }

  /**
   * Throws an SQLException with SQLState 25P02 and the explanation when the transaction aborted.
   */
  static void requireNotAborted(Connection connection, String explanation) throws SQLException {
    if (isAborted(connection)) {
      throw new SQLException(explanation, SqlStates.IN_FAILED_SQL_TRANSACTION);
    }
  }

  /**
   * Whether an SQL error aborted the connection's transaction. pgjdbc knows it from the server's
   * last ReadyForQuery, without a round trip; a connection that does not unwrap to pgjdbc is asked
   * with a statement that an aborted transaction refuses.
   */
  static boolean isAborted(Connection connection) throws SQLException {
    if (connection.isWrapperFor(BaseConnection.class)) {
      return connection.unwrap(BaseConnection.class).getTransactionState()
          == TransactionState.FAILED;
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute("SELECT 1");
      return false;
    } catch (SQLException e) {
      if (SqlStates.IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
        return true;
      }
      throw e;
    }
  }

  /** Rolls back what is open, ignoring a connection that is already gone. */
  static void rollbackQuietly(Connection connection, Throwable cause) {
    try {
      if (!connection.isClosed() && !connection.getAutoCommit()) {
        connection.rollback();
      }
    } catch (SQLException e) {
      cause.addSuppressed(e);
      log.debug("rollback failed after {}", cause.toString(), e);
    }
  }

  /**
   * Rolls back whatever is still open, restores auto-commit and closes (returns to the pool). The
   * rollback comes first because turning auto-commit on commits an open transaction: a handler that
   * threw an {@link Error} past every catch would otherwise have its partial writes committed with
   * its key. After a commit or rollback the driver sends nothing for it.
   */
  static void end(Connection connection) throws SQLException {
    try {
      if (!connection.getAutoCommit()) {
        connection.rollback();
        connection.setAutoCommit(true);
      }
    } finally {
      connection.close();
    }
  }

  /**
   * A connection for statements that must each commit on their own, whatever auto-commit the pool
   * hands out: on a pool configured {@code autoCommit=false}, an update on a bare connection would
   * be rolled back when the connection is returned.
   */
  static Connection autoCommitted(DataSource dataSource) throws SQLException {
    Connection connection = dataSource.getConnection();
    try {
      if (!connection.getAutoCommit()) {
        connection.setAutoCommit(true);
      }
      return connection;
    } catch (SQLException e) {
      closeQuietly(connection, e);
      throw e;
    }
  }

  static void closeQuietly(Connection connection, Throwable cause) {
    try {
      connection.close();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }
}
