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
 * gets one more attempt than configured.
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

  void count(Claim claim, byte[] fingerprint, String error) {
    Connection connection = null;
    try {
      connection = Transactions.begin(dataSource);
      claimer.configureTransaction(connection);
      try (PreparedStatement ps = connection.prepareStatement(sql.recordFailure)) {
        ps.setString(1, claim.scope());
        ps.setString(2, claim.key());
        ps.setBytes(3, fingerprint);
        ps.setInt(4, Math.max(1, claim.attempts()));
        ps.setString(5, FailureText.storable(error));
        ps.executeUpdate();
      }
      Transactions.commit(connection);
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, rollbackWait);
      }
      log.warn(
          "could not count the failed attempt of key '{}' in scope '{}': {}",
          claim.key(),
          claim.scope(),
          e.toString());
    } finally {
      Transactions.endQuietly(connection);
    }
  }
}
