package dev.inbox.internal;

import dev.inbox.InboxSettings;
import dev.inbox.TransientFailures;
import dev.inbox.spi.AbortedTransactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.concurrent.Executor;
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

  /**
   * The executor for {@link Connection#abort} and {@link Connection#setNetworkTimeout}: the
   * caller's thread, since an abort is a socket close and the timeout needs none.
   */
  private static final Executor CALLING_THREAD = Runnable::run;

  /** The least a rollback after a failure may wait for the server's answer. */
  static final Duration MIN_ROLLBACK_WAIT = Duration.ofSeconds(5);

  /** SQLState connection_failure, for a connection the inbox aborted. */
  private static final String CONNECTION_FAILURE = "08006";

  private Transactions() {}

  /**
   * How long a rollback after a failure may wait for the server: {@code lockTimeout}, but at least
   * {@link #MIN_ROLLBACK_WAIT}. A rollback takes no lock and normally answers at once; the bound
   * only has to tell a loaded server from a connection that will never answer.
   */
  static Duration rollbackWait(InboxSettings settings) {
    Duration lockTimeout = settings.lockTimeout();
    return lockTimeout.compareTo(MIN_ROLLBACK_WAIT) > 0 ? lockTimeout : MIN_ROLLBACK_WAIT;
  }

  /**
   * Rolls back to the savepoint, or the whole transaction when it is null, after a handler failed,
   * waiting at most {@code wait} for the server's answer.
   *
   * <p>A handler that threw in the middle of a statement can leave a message half-sent: pgjdbc pads
   * a parameter stream that throws an IOException out to its announced length, but one that throws
   * anything else (an OutOfMemoryError, an UncheckedIOException) leaves the Bind message short. The
   * server then waits for the rest of it, and the driver, with no socket timeout by default, for
   * the rollback's answer: forever, holding every row lock of the transaction. A connection that
   * does not answer in time, or is gone, is aborted (a pool evicts it), and the server rolls the
   * transaction back when it sees the connection close.
   *
   * @throws SQLException of class 08 when the connection broke and was aborted; any other failure
   *     of the rollback as it came, with the connection's network timeout as it was
   */
  static void rollbackAfterFailure(Connection connection, Savepoint savepoint, Duration wait)
      throws SQLException {
    int previousTimeout = 0;
    try {
      previousTimeout = connection.getNetworkTimeout();
      connection.setNetworkTimeout(
          CALLING_THREAD, (int) Math.min(Integer.MAX_VALUE, Math.max(1, wait.toMillis())));
      if (savepoint == null) {
        connection.rollback();
      } else {
        connection.rollback(savepoint);
      }
    } catch (SQLException e) {
      if (!TransientFailures.isConnectionFailure(e) && !connection.isClosed()) {
        connection.setNetworkTimeout(CALLING_THREAD, previousTimeout);
        throw e;
      }
      abort(connection, e);
      throw new SQLException(
          "the connection did not answer a rollback within "
              + wait.toMillis()
              + " ms, or was gone (a handler that throws in the middle of a statement leaves it"
              + " half-sent); it was aborted, and the server rolls its transaction back",
          CONNECTION_FAILURE,
          e);
    }
    connection.setNetworkTimeout(CALLING_THREAD, previousTimeout);
  }

  /** Closes the connection's socket without a round trip, unless it is closed already. */
  private static void abort(Connection connection, Throwable cause) {
    try {
      if (!connection.isClosed()) {
        connection.abort(CALLING_THREAD);
      }
    } catch (SQLException | RuntimeException e) {
      cause.addSuppressed(e);
    }
  }

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
   * Throws when a connection is inside a transaction (with auto-commit off, a statement ran since
   * its last commit or rollback; with it on, a BEGIN sent as a statement), which a commit of the
   * inbox's would commit with it. pgjdbc knows it from the server's last reply, without a round
   * trip.
   *
   * @throws IllegalStateException when it is, or when the connection does not unwrap to pgjdbc and
   *     so cannot tell
   */
  static void requireNoTransaction(Connection connection) throws SQLException {
    if (!connection.isWrapperFor(BaseConnection.class)) {
      throw new IllegalStateException(
          "cannot tell whether the connection still holds a transaction: it does not unwrap to"
              + " pgjdbc's BaseConnection");
    }
    TransactionState state = connection.unwrap(BaseConnection.class).getTransactionState();
    if (state != TransactionState.IDLE) {
      throw new IllegalStateException(
          "the connection still holds a transaction ("
              + state
              + "), which counting the failed attempt would commit with it; roll it back first");
    }
  }

  /** Whether an SQL error aborted the connection's transaction: {@link AbortedTransactions}. */
  static boolean isAborted(Connection connection) throws SQLException {
    return AbortedTransactions.isAborted(connection);
  }

  /**
   * Rolls back what is open, ignoring a connection that is already gone, and aborting one that does
   * not answer within {@code wait} ({@link #rollbackAfterFailure}).
   */
  static void rollbackQuietly(Connection connection, Throwable cause, Duration wait) {
    try {
      if (!connection.isClosed() && !connection.getAutoCommit()) {
        rollbackAfterFailure(connection, null, wait);
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
   * its key. After a commit or rollback the driver sends nothing for it. An aborted connection is
   * only closed.
   */
  static void end(Connection connection) throws SQLException {
    try {
      if (!connection.isClosed() && !connection.getAutoCommit()) {
        connection.rollback();
        connection.setAutoCommit(true);
      }
    } finally {
      connection.close();
    }
  }

  /** {@link #end}, logging a failure instead of throwing it; nothing to do for null. */
  static void endQuietly(Connection connection) {
    if (connection == null) {
      return;
    }
    try {
      end(connection);
    } catch (SQLException e) {
      log.debug("returning a connection failed", e);
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
