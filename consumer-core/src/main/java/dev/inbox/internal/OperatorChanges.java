package dev.inbox.internal;

import dev.inbox.AdminAction;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxSettings;
import dev.inbox.LiveLeaseException;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An operator's release or settlement of one key, in one transaction: the row is locked (waiting at
 * most {@code lockTimeout} for a claimant in flight), changed by a statement that takes its guard
 * from the {@link StateMachine}, and the change is audited with the row before and after. The guard
 * decides what may change; the row read first only explains a refusal.
 */
final class OperatorChanges {
  private static final Logger log = LoggerFactory.getLogger(OperatorChanges.class);

  /** What an operator does to a key, as the audit table names it. */
  enum Verb {
    RELEASE,
    SETTLE;

    String word() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** What a change did. */
  enum Outcome {
    CHANGED,
    NOT_FOUND,
    REFUSED
  }

  /** The key's row as the change found it, locked. */
  private record Locked(
      RecordState state,
      String owner,
      long fencingToken,
      Instant lockedUntil,
      boolean leaseLive,
      String json) {}

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final Statements sql;

  OperatorChanges(DataSource dataSource, InboxSettings settings, Statements sql) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.sql = sql;
  }

  /**
   * Releases or settles the key ({@code result} only for a settlement).
   *
   * @throws LiveLeaseException when its lease runs on and the action is not forced
   */
  Outcome change(String scope, String key, Verb verb, StoredResult result, AdminAction action) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Objects.requireNonNull(action, "action");
    Connection connection = null;
    try {
      connection = Transactions.begin(dataSource);
      try (Statement s = connection.createStatement()) {
        // READ COMMITTED whatever the pool's default: the partitioned storage's key guard refuses
        // any other isolation, and settling a key without a record inserts one.
        s.execute(
            "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '"
                + settings.lockTimeout().toMillis()
                + "ms'");
      }
      Outcome outcome = change(connection, scope, key, verb, result, action);
      if (outcome == Outcome.CHANGED) {
        Transactions.commit(connection);
        log.info(
            "{} key '{}' in scope '{}' by '{}'{}: {}",
            verb == Verb.RELEASE ? "released" : "settled",
            key,
            scope,
            action.actor(),
            action.force() ? " (forced)" : "",
            action.reason());
      } else {
        connection.rollback();
      }
      return outcome;
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, Transactions.rollbackWait(settings));
      }
      String why =
          SqlStates.isLockTimeout(e)
              ? verb.word()
                  + " waited longer than lockTimeout ("
                  + settings.lockTimeout()
                  + ") for a claimant holding the key; nothing was changed, try again"
              : verb.word() + " failed; nothing was changed";
      throw new InboxDatabaseException(scope, key, why, e);
    } catch (RuntimeException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, Transactions.rollbackWait(settings));
      }
      throw e;
    } finally {
      Transactions.endQuietly(connection);
    }
  }

  private Outcome change(
      Connection connection,
      String scope,
      String key,
      Verb verb,
      StoredResult result,
      AdminAction action)
      throws SQLException {
    // Two rounds at most: a settlement of a key without a row races a claimant that inserts one;
    // the INSERT waits for it and does nothing, and the second round locks the row it committed.
    for (int round = 0; round < 2; round++) {
      Locked before = lock(connection, scope, key);
      if (before == null && verb == Verb.RELEASE) {
        return Outcome.NOT_FOUND;
      }
      if (before != null && before.leaseLive() && !action.force()) {
        throw new LiveLeaseException(
            scope, key, verb.word(), before.owner(), before.fencingToken(), before.lockedUntil());
      }
      String after = write(connection, scope, key, verb, result, action.force(), before == null);
      if (after == null && before == null) {
        continue;
      }
      if (after == null) {
        return Outcome.REFUSED;
      }
      audit(connection, scope, key, verb, action, before == null ? null : before.json(), after);
      return Outcome.CHANGED;
    }
    throw new IllegalStateException(
        "settling key '"
            + key
            + "' in scope '"
            + scope
            + "' found no row to lock, yet its insert met one twice; this indicates a bug");
  }

  private Locked lock(Connection connection, String scope, String key) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.lockForOperator)) {
      ps.setString(1, scope);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return new Locked(
            Rows.state(rs),
            rs.getString("lease_owner"),
            rs.getLong("fencing_token"),
            Rows.instant(rs, "locked_until"),
            Boolean.TRUE.equals(Rows.leaseLive(rs)) && Rows.state(rs) == RecordState.IN_PROGRESS,
            rs.getString("audit_json"));
      }
    }
  }

  /** The guarded write; returns the row after it as JSON, or null when it changed no row. */
  private String write(
      Connection connection,
      String scope,
      String key,
      Verb verb,
      StoredResult result,
      boolean force,
      boolean noRow)
      throws SQLException {
    String statement;
    if (verb == Verb.RELEASE) {
      statement = force ? sql.releaseForced : sql.release;
    } else if (noRow) {
      statement = sql.settleNew;
    } else {
      statement = force ? sql.settleForced : sql.settle;
    }
    try (PreparedStatement ps = connection.prepareStatement(statement)) {
      if (verb == Verb.RELEASE) {
        ps.setString(1, scope);
        ps.setString(2, key);
      } else if (noRow) {
        ps.setString(1, scope);
        ps.setString(2, key);
        Rows.setResult(connection, ps, 3, result);
      } else {
        Rows.setResult(connection, ps, 1, result);
        ps.setString(5, scope);
        ps.setString(6, key);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString("audit_json") : null;
      }
    }
  }

  private void audit(
      Connection connection,
      String scope,
      String key,
      Verb verb,
      AdminAction action,
      String before,
      String after)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.insertAudit)) {
      ps.setString(1, action.actor());
      ps.setString(2, action.reason());
      ps.setString(3, verb.name());
      ps.setBoolean(4, action.force());
      ps.setString(5, scope);
      ps.setString(6, key);
      ps.setString(7, before);
      ps.setString(8, after);
      ps.executeUpdate();
    }
  }
}
