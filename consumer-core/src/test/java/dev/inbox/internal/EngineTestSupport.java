package dev.inbox.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Claim;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.RecordState;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.TestDataSources;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * For tests of the engine's parts that no public method reaches on its own: each test gets a fresh
 * schema with the inbox table and an effects table, and the statements and claimer built for it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class EngineTestSupport {
  protected static final String SCOPE = "s";

  protected HikariDataSource dataSource;
  protected String schema;
  protected InboxSettings settings;
  protected Statements sql;
  protected Claimer claimer;
  protected EffectsTable effects;
  private Inbox inbox;

  @BeforeAll
  void openPool() {
    dataSource = TestDataSources.pool(4);
  }

  @AfterAll
  void closePool() {
    dataSource.close();
  }

  @BeforeEach
  void freshSchema() throws SQLException {
    schema = TestDataSources.newSchema("engine");
    settings =
        InboxSettings.builder()
            .schema(schema)
            .janitorInterval(Duration.ZERO)
            .lockTimeout(Duration.ofSeconds(5))
            .build();
    InboxSchema.migrate(dataSource, settings);
    sql = new Statements(settings);
    claimer = new Claimer(sql, settings);
    effects = new EffectsTable(dataSource, schema);
    effects.create();
    inbox = Inbox.builder().dataSource(dataSource).settings(settings).build();
  }

  @AfterEach
  void closeInbox() {
    inbox.close();
  }

  /** A connection of the pool with a transaction to begin at its first statement. */
  protected Connection begin() throws SQLException {
    Connection connection = dataSource.getConnection();
    connection.setAutoCommit(false);
    return connection;
  }

  /**
   * Claims a key as the first statement of the transaction, written COMPLETED, as a transaction
   * that commits only when its handler succeeded does.
   */
  protected Claim claimAtStart(Connection transaction, String key) throws SQLException {
    return claimer
        .claimAsFirstStatement(
            transaction,
            SCOPE,
            List.of(new Claimer.Request(key, null)),
            null,
            RecordState.COMPLETED)
        .get(key);
  }

  protected InboxRecord record(String key) {
    return inbox.admin().find(SCOPE, key).orElseThrow();
  }

  protected boolean recorded(String key) {
    return inbox.admin().find(SCOPE, key).isPresent();
  }
}
