package dev.inbox.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/**
 * The business table the tests' handlers write to: one row per effect, with no unique constraint,
 * so that a doubled execution shows up as a second row.
 */
public final class EffectsTable {
  private final DataSource dataSource;
  private final String table;

  public EffectsTable(DataSource dataSource, String schema) {
    this.dataSource = dataSource;
    this.table = schema + ".effects";
  }

  public void create() throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + table + " (key text NOT NULL, amount bigint NOT NULL)");
    }
  }

  /** The handler's write, through the inbox's transaction. */
  public void apply(Connection transaction, String key, long amount) throws SQLException {
    try (PreparedStatement ps =
        transaction.prepareStatement("INSERT INTO " + table + " (key, amount) VALUES (?, ?)")) {
      ps.setString(1, key);
      ps.setLong(2, amount);
      ps.executeUpdate();
    }
  }

  /** A set-based handler's write: one row per key, in one statement. */
  public void applyAll(Connection transaction, List<String> keys, List<Long> amounts)
      throws SQLException {
    try (PreparedStatement ps =
        transaction.prepareStatement(
            "INSERT INTO "
                + table
                + " (key, amount) SELECT * FROM unnest(?::text[], ?::bigint[])")) {
      ps.setArray(1, transaction.createArrayOf("text", keys.toArray()));
      ps.setArray(2, transaction.createArrayOf("bigint", amounts.toArray()));
      ps.executeUpdate();
    }
  }

  public long count() throws SQLException {
    return single("SELECT count(*) FROM " + table);
  }

  public long distinctKeys() throws SQLException {
    return single("SELECT count(DISTINCT key) FROM " + table);
  }

  public long sum() throws SQLException {
    return single("SELECT coalesce(sum(amount), 0) FROM " + table);
  }

  private long single(String query) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
