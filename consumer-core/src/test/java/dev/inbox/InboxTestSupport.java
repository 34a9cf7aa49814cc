package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestStorage;
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
 * Each test gets a fresh schema with the inbox table and an {@code effects} table. The effects
 * table has deliberately no unique constraint, so that a doubled execution shows up as a doubled
 * row.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InboxTestSupport {
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
    schema = TestDataSources.newSchema("core");
    sql(
        "CREATE TABLE "
            + schema
            + ".effects (scope text NOT NULL, key text NOT NULL, amount bigint NOT NULL)");
  }

  @AfterEach
  void closeInboxes() {
    inboxes.forEach(Inbox::close);
    inboxes.clear();
  }

  protected InboxSettings.Builder settings() {
    return InboxSettings.builder()
        .schema(schema)
        .storage(Storage.valueOf(TestStorage.name()))
        .janitorInterval(Duration.ZERO)
        .lockTimeout(Duration.ofSeconds(5))
        .leaseDuration(Duration.ofSeconds(30));
  }

  /**
   * Why a test of a claim that records a key while {@code execute}'s reservation holds it does not
   * run on the partitioned storage.
   */
  protected static final String A_CLAIM_WAITS_FOR_THE_RESERVATION =
      "a claim's insert takes the key guard's advisory lock, which is the reservation's, so it waits"
          + " for the reservation instead of recording the key first";

  /**
   * Skips the test on the partitioned storage, whose answer to its scenario differs from the plain
   * table's by design, for the reason given (docs/scale.md, Limits).
   */
  protected static void assumeTableStorage(String whyThePartitionedStorageDiffers) {
    assumeTrue(
        Storage.valueOf(TestStorage.name()) == Storage.TABLE,
        "on the partitioned storage " + whyThePartitionedStorageDiffers);
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

  /**
   * An inbox that joins {@code transaction} ({@link InboxBuilder#callerTransactions}), as one bound
   * to the thread by Spring's {@code @Transactional} would: its {@code execute} and {@code
   * executeBatch} run on that transaction, under a savepoint, and never commit it.
   */
  protected Inbox joining(Connection transaction) {
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(settings().build())
            .callerTransactions(() -> transaction)
            .migrate(true)
            .build();
    inboxes.add(inbox);
    return inbox;
  }

  /**
   * Returns once some backend waits for a lock that the backend {@code holder} holds. Fails when
   * {@code waiter}, the call expected to wait, ends first.
   */
  protected void awaitBlockedBy(int holder, Future<?> waiter) throws Exception {
    while (queryLong(
            "SELECT count(*) FROM pg_stat_activity WHERE "
                + holder
                + " = ANY(pg_blocking_pids(pid))")
        == 0) {
      assertThat(waiter.isDone()).as("the waiter cannot finish before the holder").isFalse();
      Thread.sleep(10);
    }
  }

  /**
   * Time passes for every record of the inbox table: its times and lease ends move that far into
   * the past. The inbox compares them with the database's clock, so this is how a test makes a
   * lease expire or a record outlive its retention without waiting.
   */
  protected void timePasses(Duration duration) throws SQLException {
    String by = " - interval '" + duration + "'";
    sql(
        "UPDATE "
            + schema
            + ".inbox SET created_at = created_at"
            + by
            + ", updated_at = updated_at"
            + by
            + ", completed_at = completed_at"
            + by
            + ", locked_until = locked_until"
            + by);
  }

  /** Writes one effect row through the handler's transaction. */
  protected void effect(Connection tx, String scope, String key, long amount) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement(
            "INSERT INTO " + schema + ".effects (scope, key, amount) VALUES (?, ?, ?)")) {
      ps.setString(1, scope);
      ps.setString(2, key);
      ps.setLong(3, amount);
      ps.executeUpdate();
    }
  }

  /** {@code execute} of the key with a handler that writes one effect row. */
  protected Execution executeWithEffect(Inbox inbox, String scope, String key) {
    return inbox.execute(
        scope,
        key,
        tx -> {
          effect(tx, scope, key, 1);
          return null;
        });
  }

  /**
   * What a handler throws to fail like a serialization failure: its writes are rolled back, and the
   * attempt is not counted, as after a caller's rollback.
   */
  protected static SQLException serializationFailure() {
    return new SQLException("could not serialize access due to concurrent update", "40001");
  }

  /** {@code execute} of the key with a handler that throws: a failed attempt, counted. */
  protected static void executeFailing(Inbox inbox, String scope, String key, byte[] fingerprint) {
    assertThatThrownBy(
            () ->
                inbox.execute(
                    scope,
                    key,
                    fingerprint,
                    tx -> {
                      throw new IllegalStateException("the handler failed");
                    }))
        .isInstanceOf(HandlerFailedException.class);
  }

  /** The key delivered in a batch of one, with a handler that writes one effect row. */
  protected ItemStatus deliverWithEffect(
      Inbox inbox, String scope, String key, byte[] fingerprint) {
    return inbox
        .executeBatch(
            scope,
            List.of(new BatchItem<>(key, fingerprint, 1L)),
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, scope, item.key(), item.payload());
              return null;
            })
        .items()
        .get(0)
        .status();
  }

  /** Writes the effects of many items with one multi-row INSERT, as a set-based handler does. */
  protected void effects(Connection tx, String scope, List<BatchItem<Long>> items)
      throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement(
            "INSERT INTO "
                + schema
                + ".effects (scope, key, amount) SELECT ?, k, a"
                + " FROM unnest(?::text[], ?::bigint[]) AS u(k, a)")) {
      ps.setString(1, scope);
      ps.setArray(2, tx.createArrayOf("text", items.stream().map(BatchItem::key).toArray()));
      ps.setArray(3, tx.createArrayOf("bigint", items.stream().map(BatchItem::payload).toArray()));
      ps.executeUpdate();
    }
  }

  protected long effects() throws SQLException {
    return queryLong("SELECT count(*) FROM " + schema + ".effects");
  }

  protected long effects(String key) throws SQLException {
    return queryLong(
        "SELECT count(*) FROM " + schema + ".effects WHERE key = '" + key.replace("'", "''") + "'");
  }

  /** Keys whose effect was applied more than once: the count exactly-once must keep at zero. */
  protected long keysWithADoubledEffect() throws SQLException {
    return queryLong(
        "SELECT count(*) FROM (SELECT key FROM "
            + schema
            + ".effects GROUP BY key HAVING count(*) > 1) d");
  }

  protected long inboxRows() throws SQLException {
    return queryLong("SELECT count(*) FROM " + schema + ".inbox");
  }

  protected long queryLong(String query) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return queryLong(c, query);
    }
  }

  /** A count or number read on the given connection, inside its transaction. */
  protected static long queryLong(Connection connection, String query) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** A text read on the given connection, inside its transaction. */
  protected static String queryString(Connection connection, String query) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getString(1);
    }
  }

  protected String queryString(String query) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return queryString(c, query);
    }
  }

  protected void sql(String statement) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
