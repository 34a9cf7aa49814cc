package dev.inbox.internal;

import dev.inbox.Claim;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxSettings;
import dev.inbox.LeaseToken;
import dev.inbox.Leases;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * {@link Leases} on PostgreSQL. A claim commits at once; every later call is one conditional UPDATE
 * on the lease's fencing token, whose 0-row answer is a lost lease unless the token is still this
 * owner's.
 */
final class PostgresLeases implements Leases {
  /** How many times a lease owner's write runs when the retention moved its row meanwhile. */
  private static final int MOVED_ROW_RUNS = 3;

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
    runOnRow(
        lease,
        "complete of a lease failed",
        connection -> {
          try (PreparedStatement ps = connection.prepareStatement(sql.complete)) {
            PostgresInbox.bindCompletion(
                connection, ps, lease.scope(), lease.key(), lease.fencingToken(), result);
            if (ps.executeUpdate() != 1) {
              throw leaseRefused(connection, lease, StateMachine.Transition.COMPLETE);
            }
            return null;
          }
        });
  }

  @Override
  public void fail(LeaseToken lease, String error) {
    Objects.requireNonNull(lease, "lease");
    runOnRow(
        lease,
        "fail of a lease failed",
        connection -> {
          try (PreparedStatement ps = connection.prepareStatement(sql.failLease)) {
            ps.setString(1, FailureText.storable(error));
            ps.setString(2, lease.scope());
            ps.setString(3, lease.key());
            ps.setLong(4, lease.fencingToken());
            if (ps.executeUpdate() != 1) {
              throw leaseRefused(connection, lease, StateMachine.Transition.FAIL);
            }
            return null;
          }
        });
  }

  @Override
  public LeaseToken renew(LeaseToken lease) {
    Objects.requireNonNull(lease, "lease");
    return runOnRow(
        lease,
        "renew of a lease failed",
        connection -> {
          try (PreparedStatement ps = connection.prepareStatement(sql.renewLease)) {
            ps.setString(1, settings.leaseDuration().toString());
            ps.setString(2, lease.scope());
            ps.setString(3, lease.key());
            ps.setLong(4, lease.fencingToken());
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                throw leaseRefused(connection, lease, StateMachine.Transition.RENEW);
              }
              return new LeaseToken(
                  lease.scope(),
                  lease.key(),
                  lease.owner(),
                  lease.fencingToken(),
                  Rows.instant(rs, "locked_until"));
            }
          }
        });
  }

  /** One lease owner's statement on the key's row, on an autocommitted connection. */
  private interface RowWrite<T> {
    T run(Connection connection) throws SQLException;
  }

  /**
   * Runs a lease owner's write, again when it met its row while the partitioned storage's retention
   * moved it to the write generation (40001, "tuple to be locked was already moved to another
   * partition"): the write is one autocommitted statement, so nothing of it committed, and run
   * again it finds the moved row. The plain table never moves a row.
   */
  private <T> T runOnRow(LeaseToken lease, String failure, RowWrite<T> write) {
    for (int run = 1; ; run++) {
      try (Connection connection = Transactions.autoCommitted(dataSource)) {
        return write.run(connection);
      } catch (SQLException e) {
        if (SqlStates.SERIALIZATION_FAILURE.equals(e.getSQLState()) && run < MOVED_ROW_RUNS) {
          continue;
        }
        throw new InboxDatabaseException(lease.scope(), lease.key(), failure, e);
      }
    }
  }

  /** Why a lease owner's write changed no row; {@link StateMachine#leaseRefused} explains. */
  private InboxException leaseRefused(
      Connection connection, LeaseToken lease, StateMachine.Transition transition)
      throws SQLException {
    return StateMachine.leaseRefused(
        transition,
        lease.scope(),
        lease.key(),
        lease.fencingToken(),
        PostgresAdmin.find(connection, sql, lease.scope(), lease.key()));
  }
}
