package dev.inbox.internal;

import dev.inbox.Claim;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts a failed attempt in a short transaction of its own, after the attempt's transaction rolled
 * back or its connection was aborted, and keeps the attempt's fingerprint on the key, so that a
 * retry with another request is a mismatch. Best effort: when it cannot be written, the key simply
 * gets one more attempt than configured. Written on a connection of its own ({@link #count}), on
 * one whose transaction has ended ({@link #countOn}), or inside the caller's transaction ({@link
 * #countInCallersTransaction}).
 */
final class FailureCounter {
  private static final Logger log = LoggerFactory.getLogger(FailureCounter.class);

  private final DataSource dataSource;
  private final Claimer claimer;
  private final Statements sql;
  private final Duration rollbackWait;

  FailureCounter(DataSource dataSource, Claimer claimer, Statements sql, Duration rollbackWait) {
    this.dataSource = dataSource;
    this.claimer = claimer;
    this.sql = sql;
    this.rollbackWait = rollbackWait;
  }

  /** Counts on a connection of the data source's own. */
  void count(Claim claim, byte[] fingerprint, String error) {
    Connection connection = null;
    try {
      connection = Transactions.begin(dataSource);
      write(connection, claim, fingerprint, error);
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, rollbackWait);
      }
      warn(claim, e);
    } finally {
      Transactions.endQuietly(connection);
    }
  }

  /**
   * Counts on a connection whose transaction has ended (the one that rolled back, typically), in a
   * transaction of its own that it commits; the connection's auto-commit mode is left as it was
   * found. Needs no second connection, so it cannot wait for a pool that its caller exhausted; when
   * the count cannot be written there (the connection broke, or was handed back already), it is
   * written on a connection of the data source's own ({@link #count}).
   *
   * @throws IllegalStateException when the connection still holds a transaction, whose work the
   *     count's commit would commit
   */
  void countOn(Connection connection, Claim claim, byte[] fingerprint, String error) {
    if (!writeOn(connection, claim, fingerprint, error)) {
      count(claim, fingerprint, error);
    }
  }

  /** {@link #countOn} without the second try: false when nothing could be written. */
  private boolean writeOn(Connection connection, Claim claim, byte[] fingerprint, String error) {
    boolean autoCommit;
    try {
      autoCommit = connection.getAutoCommit();
      // Also with auto-commit on: a BEGIN sent as a statement opens a transaction all the same.
      Transactions.requireNoTransaction(connection);
    } catch (SQLException e) {
      log.debug("counting on the caller's connection failed; counting on one of the pool's", e);
      return false;
    }
    try {
      if (autoCommit) {
        connection.setAutoCommit(false);
      }
      write(connection, claim, fingerprint, error);
      return true;
    } catch (SQLException e) {
      Transactions.rollbackQuietly(connection, e, rollbackWait);
      log.debug("counting on the caller's connection failed; counting on one of the pool's", e);
      return false;
    } finally {
      if (autoCommit) {
        restoreAutoCommit(connection);
      }
    }
  }

  /**
   * Counts inside the caller's transaction, still open, under a savepoint and the inbox's lock
   * timeout, so that a later claim of the key in this same transaction sees the attempt (and gives
   * up after maxAttempts) and a commit keeps it. It never aborts the caller's transaction: a count
   * that fails is rolled back to its savepoint and logged. A rollback undoes it; the caller must
   * then count again, after the rollback ({@link #countOn}).
   */
  void countInCallersTransaction(
      Connection transaction, Claim claim, byte[] fingerprint, String error) {
    try {
      String callersLockTimeout = claimer.joinedSavepoint(transaction);
      try {
        writeStatement(transaction, claim, fingerprint, error);
        Claimer.releaseJoinedSavepoint(transaction, callersLockTimeout);
      } catch (SQLException e) {
        Claimer.rollBackJoinedSavepoint(transaction, e);
        throw e;
      }
    } catch (SQLException e) {
      warn(claim, e);
    }
  }

  /**
   * The count's transaction on a connection with auto-commit off: configured, written, committed.
   */
  private void write(Connection connection, Claim claim, byte[] fingerprint, String error)
      throws SQLException {
    claimer.configureTransaction(connection);
    writeStatement(connection, claim, fingerprint, error);
    Transactions.commit(connection);
  }

  private void writeStatement(Connection connection, Claim claim, byte[] fingerprint, String error)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.recordFailure)) {
      ps.setString(1, claim.scope());
      ps.setString(2, claim.key());
      ps.setBytes(3, fingerprint);
      ps.setInt(4, Math.max(1, claim.attempts()));
      ps.setString(5, FailureText.storable(error));
      ps.executeUpdate();
    }
  }

  private static void restoreAutoCommit(Connection connection) {
    try {
      if (!connection.isClosed()) {
        connection.setAutoCommit(true);
      }
    } catch (SQLException e) {
      log.debug("restoring auto-commit after counting a failed attempt failed", e);
    }
  }

  private static void warn(Claim claim, SQLException e) {
    log.warn(
        "could not count the failed attempt of key '{}' in scope '{}': {}",
        claim.key(),
        claim.scope(),
        e.toString());
  }
}
