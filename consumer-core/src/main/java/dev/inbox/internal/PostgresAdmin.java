package dev.inbox.internal;

import dev.inbox.Claim;
import dev.inbox.InboxAdmin;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSettings;
import dev.inbox.ReleaseResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link InboxAdmin} on PostgreSQL: one short statement per call, on a connection of its own. */
final class PostgresAdmin implements InboxAdmin {
  private static final Logger log = LoggerFactory.getLogger(PostgresAdmin.class);

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final Statements sql;
  private final Claimer claimer;

  PostgresAdmin(DataSource dataSource, InboxSettings settings, Statements sql, Claimer claimer) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.sql = sql;
    this.claimer = claimer;
  }

  @Override
  public Optional<InboxRecord> find(String scope, String key) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try (Connection connection = dataSource.getConnection()) {
      return find(connection, scope, key);
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "find failed", e);
    }
  }

  @Override
  public Optional<Claim> lookup(String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try (Connection connection = dataSource.getConnection()) {
      return Optional.ofNullable(
          claimer.settled(connection, scope, new Claimer.Request(key, fingerprint)));
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "lookup failed", e);
    }
  }

  @Override
  public ReleaseResult release(String scope, String key) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.release)) {
      ps.setString(1, scope);
      ps.setString(2, key);
      if (ps.executeUpdate() == 1) {
        log.info("released key '{}' in scope '{}' for reprocessing", key, scope);
        return ReleaseResult.RELEASED;
      }
      return StateMachine.notReleased(
          find(connection, scope, key).map(InboxRecord::state).orElse(StateMachine.NO_RECORD));
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "release failed", e);
    }
  }

  @Override
  public long purgeExpired() {
    long start = System.nanoTime();
    long total = 0;
    try (Connection connection = Transactions.autoCommitted(dataSource)) {
      for (String purge : List.of(sql.purge, sql.purgeCommittedWithoutComplete)) {
        try (PreparedStatement ps = connection.prepareStatement(purge)) {
          int deleted;
          do {
            ps.setString(1, settings.retention().toString());
            ps.setInt(2, settings.purgeBatchSize());
            deleted = ps.executeUpdate();
            total += deleted;
          } while (deleted == settings.purgeBatchSize());
        }
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          null, null, "purge of expired records failed after " + total + " rows", e);
    }
    settings.listener().purged(total, Claimer.since(start));
    return total;
  }

  /** The janitor's round: purge, then report the age of the oldest lease. */
  void janitorRun() {
    long purged = purgeExpired();
    if (purged > 0) {
      log.debug("purged {} expired records from {}", purged, settings.qualifiedTable());
    }
    try (Connection connection = dataSource.getConnection();
        PreparedStatement ps = connection.prepareStatement(sql.oldestInProgress);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      Instant oldest = Rows.instant(rs, "oldest");
      settings
          .listener()
          .oldestInProgress(
              oldest == null
                  ? Duration.ZERO
                  : Duration.between(oldest, Rows.instant(rs, "db_now")));
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          null, null, "reading the oldest IN_PROGRESS record failed", e);
    }
  }

  static Optional<InboxRecord> find(Connection connection, Statements sql, String scope, String key)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.find)) {
      ps.setString(1, scope);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(Rows.record(rs)) : Optional.empty();
      }
    }
  }

  private Optional<InboxRecord> find(Connection connection, String scope, String key)
      throws SQLException {
    return find(connection, sql, scope, key);
  }
}
