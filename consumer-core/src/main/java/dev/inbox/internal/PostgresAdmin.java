package dev.inbox.internal;

import dev.inbox.AdminAction;
import dev.inbox.Claim;
import dev.inbox.InboxAdmin;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.InboxStats;
import dev.inbox.KeyFilter;
import dev.inbox.KeyPage;
import dev.inbox.KeyReport;
import dev.inbox.LiveLeaseException;
import dev.inbox.ReleaseResult;
import dev.inbox.SettleResult;
import dev.inbox.Storage;
import dev.inbox.StoredResult;
import dev.inbox.internal.OperatorChanges.Outcome;
import dev.inbox.internal.OperatorChanges.Verb;
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

/**
 * {@link InboxAdmin} on PostgreSQL: one short statement or transaction per call, on a connection of
 * its own. Operators' changes are {@link OperatorChanges}, their reads {@link AdminQueries}.
 */
final class PostgresAdmin implements InboxAdmin {
  private static final Logger log = LoggerFactory.getLogger(PostgresAdmin.class);

  /** undefined_table: the audit migration (V2) has not run on this database. */
  private static final String UNDEFINED_TABLE = "42P01";

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final Statements sql;
  private final Claimer claimer;
  private final OperatorChanges changes;
  private final AdminQueries queries;

  /** Rotation and retention for {@link Storage#PARTITIONED}; null for the plain table. */
  private final Generations generations;

  private volatile boolean purgeRecordMissingLogged;

  PostgresAdmin(DataSource dataSource, InboxSettings settings, Statements sql, Claimer claimer) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.sql = sql;
    this.claimer = claimer;
    this.changes = new OperatorChanges(dataSource, settings, sql);
    this.queries = new AdminQueries(dataSource, settings, sql);
    this.generations =
        settings.storage() == Storage.PARTITIONED ? new Generations(dataSource, settings) : null;
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
    AdminAction action =
        AdminAction.of(
            settings.ownerId(), "released by the application through InboxAdmin.release");
    try {
      return release(scope, key, action);
    } catch (LiveLeaseException e) {
      return ReleaseResult.NOT_RELEASABLE;
    }
  }

  @Override
  public ReleaseResult release(String scope, String key, AdminAction action) {
    Outcome outcome = changes.change(scope, key, Verb.RELEASE, null, action);
    return switch (outcome) {
      case CHANGED -> ReleaseResult.RELEASED;
      case NOT_FOUND -> ReleaseResult.NOT_FOUND;
      case REFUSED -> ReleaseResult.NOT_RELEASABLE;
    };
  }

  @Override
  public SettleResult settle(String scope, String key, StoredResult result, AdminAction action) {
    Outcome outcome = changes.change(scope, key, Verb.SETTLE, result, action);
    return outcome == Outcome.CHANGED ? SettleResult.SETTLED : SettleResult.NOT_SETTLEABLE;
  }

  @Override
  public KeyReport show(String scope, String key) {
    return queries.show(scope, key);
  }

  @Override
  public InboxStats stats() {
    return queries.stats();
  }

  @Override
  public KeyPage list(KeyFilter filter, String after, int limit) {
    return queries.list(filter, after, limit);
  }

  @Override
  public long countExpired() {
    return queries.countExpired();
  }

  /**
   * The plain table's bounded DELETEs; on {@link Storage#PARTITIONED}, a rotation when due and the
   * retirement of the generations due instead, returning the rows dropped with them.
   *
   * @throws IllegalStateException when a plain inbox finds the table partitioned (converted while
   *     it ran): its DELETE by {@code ctid} would hit rows of every partition at once
   */
  @Override
  public long purgeExpired() {
    long start = System.nanoTime();
    long total = 0;
    if (generations != null) {
      try {
        total = generations.pass();
      } catch (SQLException e) {
        throw new InboxDatabaseException(
            null, null, "rotation or retention of the inbox's generations failed", e);
      }
      settings.listener().purged(total, Claimer.since(start));
      recordPurge(total);
      return total;
    }
    InboxSchema.requireLayout(dataSource, settings);
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
    recordPurge(total);
    return total;
  }

  /**
   * Keeps the purge's time and count for {@code stats}. A database the audit migration has not run
   * on yet (an application that migrates by hand) loses only that record, with one warning.
   */
  private void recordPurge(long deleted) {
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.recordPurge)) {
      ps.setLong(1, deleted);
      ps.executeUpdate();
    } catch (SQLException e) {
      if (!UNDEFINED_TABLE.equals(e.getSQLState())) {
        throw new InboxDatabaseException(
            null, null, "recording the purge of " + deleted + " expired records failed", e);
      }
      if (!purgeRecordMissingLogged) {
        purgeRecordMissingLogged = true;
        log.warn(
            "the purge ran, but {}_purges is missing: run the inbox's migrations (V2) so that"
                + " stats can show the last purge",
            settings.qualifiedTable());
      }
    }
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
