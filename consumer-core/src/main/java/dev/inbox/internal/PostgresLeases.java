package dev.inbox.internal;

import dev.inbox.Claim;
import dev.inbox.IllegalStateTransitionException;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSettings;
import dev.inbox.LeaseLostException;
import dev.inbox.LeaseToken;
import dev.inbox.Leases;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * {@link Leases} on PostgreSQL. A claim commits at once; every later call is one conditional UPDATE
 * on the lease's fencing token, whose 0-row answer is a lost lease unless the token is still this
 * owner's.
 */
final class PostgresLeases implements Leases {
  private final DataSource dataSource;
  private final InboxSettings settings;
  private final Statements sql;
  private final PostgresInbox engine;

  PostgresLeases(
      DataSource dataSource, InboxSettings settings, Statements sql, PostgresInbox engine) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.sql = sql;
    this.engine = engine;
  }

  @Override
  public Claim claim(String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Connection connection = null;
    try {
      connection = Transactions.begin(dataSource);
      Claim claim =
          engine.claimFirst(
              connection,
              scope,
              new Claimer.Request(key, fingerprint),
              settings.ownerId(),
              RecordState.IN_PROGRESS);
      // Only a NEW claim wrote anything; any other answer may come from an aborted transaction.
      if (claim.isNew()) {
        Transactions.commit(connection);
      } else {
        connection.rollback();
      }
      return claim;
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, engine.rollbackWait());
      }
      throw new InboxDatabaseException(scope, key, "leased claim failed", e);
    } finally {
      Transactions.endQuietly(connection);
    }
  }

  @Override
  public void complete(LeaseToken lease, StoredResult result) {
    Objects.requireNonNull(lease, "lease");
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.complete)) {
      PostgresInbox.bindCompletion(
          connection, ps, lease.scope(), lease.key(), lease.fencingToken(), result);
      if (ps.executeUpdate() != 1) {
        throw leaseLost(connection, lease, RecordState.COMPLETED);
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(lease.scope(), lease.key(), "complete of a lease failed", e);
    }
  }

  @Override
  public void fail(LeaseToken lease, String error) {
    Objects.requireNonNull(lease, "lease");
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.failLease)) {
      ps.setString(1, error);
      ps.setString(2, lease.scope());
      ps.setString(3, lease.key());
      ps.setLong(4, lease.fencingToken());
      if (ps.executeUpdate() != 1) {
        throw leaseLost(connection, lease, RecordState.FAILED);
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(lease.scope(), lease.key(), "fail of a lease failed", e);
    }
  }

  @Override
  public LeaseToken renew(LeaseToken lease) {
    Objects.requireNonNull(lease, "lease");
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.renewLease)) {
      ps.setString(1, settings.leaseDuration().toString());
      ps.setString(2, lease.scope());
      ps.setString(3, lease.key());
      ps.setLong(4, lease.fencingToken());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw leaseLost(connection, lease, RecordState.IN_PROGRESS);
        }
        return new LeaseToken(
            lease.scope(),
            lease.key(),
            lease.owner(),
            lease.fencingToken(),
            Rows.instant(rs, "locked_until"));
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(lease.scope(), lease.key(), "renew of a lease failed", e);
    }
  }

  private LeaseLostException leaseLost(Connection connection, LeaseToken lease, RecordState target)
      throws SQLException {
    Optional<InboxRecord> found = PostgresAdmin.find(connection, sql, lease.scope(), lease.key());
    if (found.isPresent() && found.get().fencingToken() == lease.fencingToken()) {
      // Still this owner's token, so nobody took over: the record already left IN_PROGRESS.
      throw new IllegalStateTransitionException(
          lease.scope(), lease.key(), found.get().state(), target);
    }
    String description =
        found
            .map(
                r ->
                    "now "
                        + r.state()
                        + " with fencing token "
                        + r.fencingToken()
                        + ", owner "
                        + r.leaseOwner())
            .orElse("the record no longer exists");
    return new LeaseLostException(lease.scope(), lease.key(), lease.fencingToken(), description);
  }
}
