package dev.inbox.internal;

import dev.inbox.AuditEntry;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSettings;
import dev.inbox.InboxStats;
import dev.inbox.KeyFilter;
import dev.inbox.KeyPage;
import dev.inbox.KeyReport;
import dev.inbox.RecordState;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The operators' reads: one key with its audit trail, the table's counts, pages of records, and
 * what a purge would delete. Each reads in one short transaction (or statement) and writes nothing;
 * every time comes from the database.
 */
final class AdminQueries {
  /** The largest page {@link #list} returns. */
  static final int MAX_PAGE = 10_000;

  /** Between scope and key in a cursor; neither may hold a control character. */
  private static final char CURSOR_SEPARATOR = '\u001f';

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final Statements sql;

  AdminQueries(DataSource dataSource, InboxSettings settings, Statements sql) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.sql = sql;
  }

  KeyReport show(String scope, String key) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Connection connection = null;
    try {
      // One snapshot for the record, its history and now(): REPEATABLE READ, read only.
      connection = dataSource.getConnection();
      connection.setAutoCommit(false);
      connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      connection.setReadOnly(true);
      InboxRecord record = PostgresAdmin.find(connection, sql, scope, key).orElse(null);
      List<AuditEntry> history = new ArrayList<>();
      try (PreparedStatement ps = connection.prepareStatement(sql.history)) {
        ps.setString(1, scope);
        ps.setString(2, key);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            history.add(
                new AuditEntry(
                    rs.getLong("id"),
                    Rows.instant(rs, "at"),
                    rs.getString("actor"),
                    rs.getString("reason"),
                    rs.getString("action"),
                    rs.getBoolean("forced"),
                    scope,
                    key,
                    rs.getString("before"),
                    rs.getString("after")));
          }
        }
      }
      Instant now = databaseNow(connection);
      connection.commit();
      return new KeyReport(scope, key, now, record, history);
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "show failed", e);
    } finally {
      restoreAndClose(connection);
    }
  }

  InboxStats stats() {
    try (Connection connection = Transactions.autoCommitted(dataSource)) {
      List<InboxStats.Count> counts = new ArrayList<>();
      try (PreparedStatement ps = connection.prepareStatement(sql.countsPerScope)) {
        ps.setInt(1, settings.maxAttempts());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            counts.add(
                new InboxStats.Count(
                    rs.getString("scope"),
                    RecordState.valueOf(rs.getString("state")),
                    rs.getLong("total"),
                    rs.getLong("expired_leases"),
                    rs.getLong("gave_up")));
          }
        }
      }
      try (PreparedStatement ps = connection.prepareStatement(sql.overview);
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        long deleted = rs.getLong("last_deleted");
        Long lastDeleted = rs.wasNull() ? null : deleted;
        return new InboxStats(
            Rows.instant(rs, "db_now"),
            counts,
            Rows.instant(rs, "oldest_lease"),
            rs.getLong("table_bytes"),
            Rows.instant(rs, "last_run_at"),
            lastDeleted);
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(null, null, "reading the inbox's statistics failed", e);
    }
  }

  KeyPage list(KeyFilter filter, String after, int limit) {
    Objects.requireNonNull(filter, "filter");
    if (limit < 1 || limit > MAX_PAGE) {
      throw new IllegalArgumentException(
          "limit must be between 1 and " + MAX_PAGE + ", but was " + limit);
    }
    String[] cursor = after == null ? new String[] {"", ""} : decode(after);
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.list)) {
      ps.setString(1, cursor[0]);
      ps.setString(2, cursor[1]);
      ps.setString(3, filter.scope());
      ps.setString(4, filter.scope());
      String state = filter.state() == null ? null : filter.state().name();
      ps.setString(5, state);
      ps.setString(6, state);
      String age = filter.olderThan() == null ? null : filter.olderThan().toString();
      ps.setString(7, age);
      ps.setString(8, age);
      if (filter.minAttempts() == null) {
        ps.setNull(9, Types.INTEGER);
        ps.setNull(10, Types.INTEGER);
      } else {
        ps.setInt(9, filter.minAttempts());
        ps.setInt(10, filter.minAttempts());
      }
      // One more than asked: whether it comes tells whether there is a next page.
      ps.setInt(11, limit + 1);
      List<InboxRecord> records = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          records.add(Rows.record(rs));
        }
      }
      Instant now = databaseNow(connection);
      if (records.size() <= limit) {
        return new KeyPage(records, null, now);
      }
      records = records.subList(0, limit);
      InboxRecord last = records.get(limit - 1);
      return new KeyPage(records, encode(last.scope(), last.key()), now);
    } catch (SQLException e) {
      throw new InboxDatabaseException(filter.scope(), null, "listing records failed", e);
    }
  }

  long countExpired() {
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.countExpired)) {
      ps.setString(1, settings.retention().toString());
      ps.setString(2, settings.retention().toString());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong("expired");
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(null, null, "counting expired records failed", e);
    }
  }

  static String encode(String scope, String key) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString((scope + CURSOR_SEPARATOR + key).getBytes(StandardCharsets.UTF_8));
  }

  static String[] decode(String cursor) {
    try {
      String text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
      int separator = text.indexOf(CURSOR_SEPARATOR);
      if (separator > 0 && separator < text.length() - 1) {
        return new String[] {text.substring(0, separator), text.substring(separator + 1)};
      }
    } catch (IllegalArgumentException e) {
      // Not Base64: reported below like any other cursor this class did not make.
    }
    throw new IllegalArgumentException(
        "cursor '" + cursor + "' is not one that a page of list returned as its next cursor");
  }

  private static Instant databaseNow(Connection connection) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement("SELECT now() AS db_now");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return Rows.instant(rs, "db_now");
    }
  }

  /** Hands the connection back as it came: read-write, READ COMMITTED, auto-commit on. */
  private static void restoreAndClose(Connection connection) {
    if (connection == null) {
      return;
    }
    try {
      connection.rollback();
      connection.setReadOnly(false);
      connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    } catch (SQLException e) {
      // The connection is closed below either way; a pool evicts a broken one.
    } finally {
      Transactions.endQuietly(connection);
    }
  }
}
