package dev.inbox.internal;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
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
