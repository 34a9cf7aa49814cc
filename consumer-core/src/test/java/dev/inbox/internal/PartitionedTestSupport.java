package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.Execution;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.ItemStatus;
import dev.inbox.Storage;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestDataSources;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * Each test gets a fresh schema with an {@code effects} table (no unique constraint: a doubled
 * execution is a second row) and builds partitioned inboxes on it. Times are moved in the database,
 * never waited for: the inbox compares them with the database's clock.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class PartitionedTestSupport {
  protected static final String SCOPE = "s";

  protected HikariDataSource dataSource;
  protected String schema;
  protected final List<Inbox> inboxes = new ArrayList<>();

  @BeforeAll
  void openPool() {
    dataSource = TestDataSources.pool(40);
  }

  @AfterAll
  void closePool() {
    dataSource.close();
  }

  @BeforeEach
  void freshSchema() throws SQLException {
    schema = TestDataSources.newSchema("part");
    sql("CREATE TABLE " + schema + ".effects (key text NOT NULL)");
  }

  @AfterEach
  void closeInboxes() {
    inboxes.forEach(Inbox::close);
    inboxes.clear();
  }

  protected InboxSettings.Builder settings() {
    return InboxSettings.builder()
        .schema(schema)
        .storage(Storage.PARTITIONED)
        .janitorInterval(Duration.ZERO)
        .retention(Duration.ofHours(24))
        .lockTimeout(Duration.ofSeconds(5))
        .leaseDuration(Duration.ofSeconds(30));
  }

  protected Inbox inbox() {
    return inbox(s -> s);
  }

  protected Inbox inbox(UnaryOperator<InboxSettings.Builder> customize) {
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(customize.apply(settings()).build())
            .migrate(true)
            .build();
    inboxes.add(inbox);
    return inbox;
  }

  protected Generations generations(Inbox inbox) {
    return new Generations(dataSource, inbox.settings());
  }

  /** {@code execute} with a handler that writes one effect row. */
  protected Execution executeWithEffect(Inbox inbox, String key) {
    return inbox.execute(
        SCOPE,
        key,
        tx -> {
          effect(tx, key);
          return null;
        });
  }

  /**
   * A batch of the keys with {@link BatchFailurePolicy#CONTINUE} and a handler that writes one
   * effect row per item: the first key's status.
   */
  protected ItemStatus batchWithEffect(Inbox inbox, List<String> keys) {
    return inbox
        .executeBatch(
            SCOPE,
            keys.stream().map(k -> BatchItem.of(k, k)).toList(),
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, item.key());
              return null;
            })
        .items()
        .get(0)
        .status();
  }

  /** {@code execute} with a handler that throws: a failed attempt, counted on the key. */
  protected static void executeFailing(Inbox inbox, String key) {
    assertThatThrownBy(
            () ->
                inbox.execute(
                    SCOPE,
                    key,
                    tx -> {
                      throw new IllegalStateException("the handler failed");
                    }))
        .isInstanceOf(HandlerFailedException.class);
  }

  protected void effect(Connection tx, String key) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement("INSERT INTO " + schema + ".effects (key) VALUES (?)")) {
      ps.setString(1, key);
      ps.executeUpdate();
    }
  }

  protected long effects(String key) throws SQLException {
    return queryLong("SELECT count(*) FROM " + schema + ".effects WHERE key = '" + key + "'");
  }

  protected long writeGeneration() throws SQLException {
    return queryLong("SELECT max(generation) FROM " + schema + ".inbox_generations");
  }

  /** The generation that holds the key's row; fails when it has none or several. */
  protected long generationOf(String key) throws SQLException {
    return queryLong(
        "SELECT generation FROM " + schema + ".inbox WHERE scope = 's' AND key = '" + key + "'");
  }

  /** Keys with a row in more than one generation: always 0. */
  protected long keysStoredTwice() throws SQLException {
    return queryLong(
        "SELECT count(*) FROM (SELECT scope, key FROM "
            + schema
            + ".inbox GROUP BY scope, key HAVING count(*) > 1) AS twice");
  }

  /** The generation started that much earlier, by the database's clock. */
  protected void generationStartedEarlier(long generation, Duration by) throws SQLException {
    sql(
        "UPDATE "
            + schema
            + ".inbox_generations SET started_at = started_at - interval '"
            + by
            + "' WHERE generation = "
            + generation);
  }

  /** The key's row written and completed that much earlier, by the database's clock. */
  protected void recordWrittenEarlier(String key, Duration by) throws SQLException {
    String minus = " - interval '" + by + "'";
    sql(
        "UPDATE "
            + schema
            + ".inbox SET created_at = created_at"
            + minus
            + ", updated_at = updated_at"
            + minus
            + ", completed_at = completed_at"
            + minus
            + " WHERE key = '"
            + key
            + "'");
  }

  /** Partitions of the inbox, attached or pending detach. */
  protected long attachedPartitions() throws SQLException {
    return queryLong(
        "SELECT count(*) FROM pg_inherits WHERE inhparent = '" + schema + ".inbox'::regclass");
  }

  protected long queryLong(String query) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      if (!rs.next()) {
        throw new AssertionError("no row from " + query);
      }
      long value = rs.getLong(1);
      if (rs.next()) {
        throw new AssertionError("more than one row from " + query);
      }
      return value;
    }
  }

  /**
   * The version of the parent's generation column in pg_attribute, which a rotation's refresh of
   * the backends' partition lists (a reset of its n_distinct) changes.
   */
  protected String generationColumnVersion() throws SQLException {
    return queryText(
        "SELECT xmin::text FROM pg_catalog.pg_attribute WHERE attrelid = '"
            + schema
            + ".inbox'::regclass AND attname = 'generation'");
  }

  /**
   * Waits until the rotation polls for the end of the transactions it listed, before the refresh of
   * the partition lists ({@code refreshed} false: its first wait) or after it (its second), or
   * until it has returned. The rotation's backend is the one that holds this schema's pass lock;
   * its last query is the poll's only once it has listed the transactions it waits for.
   */
  protected void awaitRotationWaiting(
      Future<?> rotation, String what, String unrefreshed, boolean refreshed) throws Exception {
    String passLock = schema + ".inbox" + '\u001f' + "generations";
    Await.until(
        what,
        Duration.ofMinutes(2),
        () -> {
          if (rotation.isDone()) {
            return true;
          }
          // Read in the order that makes the poll seen the one of the wait asked for: a refresh
          // committed before a poll was seen (a poll after it is the second wait's), or a poll
          // seen before the refresh had committed (the first wait's).
          if (refreshed) {
            return !generationColumnVersion().equals(unrefreshed) && rotationPolls(passLock);
          }
          return rotationPolls(passLock) && generationColumnVersion().equals(unrefreshed);
        });
  }

  /** Whether the backend that holds the pass lock last ran the rotation's poll. */
  private boolean rotationPolls(String passLock) throws SQLException {
    return queryLong(
            "SELECT count(*) FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a"
                + " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objsubid = 1"
                + " AND l.granted AND l.classid::bigint = (hashtextextended('"
                + passLock
                + "', 0) >> 32) & 4294967295 AND l.objid::bigint = hashtextextended('"
                + passLock
                + "', 0) & 4294967295 AND a.query LIKE '%virtualxid%'")
        == 1;
  }

  protected String queryText(String query) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      if (!rs.next()) {
        throw new AssertionError("no row from " + query);
      }
      return rs.getString(1);
    }
  }

  protected void sql(String statement) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  /** A connection of the pool with a READ COMMITTED transaction begun. */
  protected Connection begin() throws SQLException {
    Connection connection = dataSource.getConnection();
    connection.setAutoCommit(false);
    connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    return connection;
  }

  /** Takes the key's lock, as execute's reservation of it or the key guard would hold it. */
  protected void lockKey(Connection connection, String key) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.executeQuery(
              "SELECT pg_advisory_xact_lock(hashtextextended('"
                  + schema
                  + ".inbox' || chr(31) || 's' || chr(31) || '"
                  + key
                  + "', 0))")
          .close();
    }
  }

  /** Waits until exactly {@code count} backends wait for the one with {@code pid}. */
  protected void awaitBlockedBy(String what, int pid, long count) throws Exception {
    Await.until(
        what,
        Duration.ofMinutes(2),
        () ->
            queryLong(
                    "SELECT count(*) FROM pg_stat_activity WHERE "
                        + pid
                        + " = ANY(pg_blocking_pids(pid))")
                == count);
  }

  protected static int pid(Connection connection) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
