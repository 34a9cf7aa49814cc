package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The inbox on a plain pgjdbc {@code PGSimpleDataSource}: no pool, no HikariCP. Each test builds
 * what it needs itself (no lifecycle methods, no shared base class that names a pool), so that
 * {@link WithoutHikariTest} can run the same tests in a class loader that has no HikariCP.
 */
class PlainDataSourceTest {
  private final DataSource dataSource = TestDatabase.shared().simpleDataSource();
  private final String schema = TestDataSources.newSchema("plain");

  private Inbox inbox() throws SQLException {
    sql("CREATE TABLE " + schema + ".effects (key text NOT NULL)");
    return Inbox.builder()
        .dataSource(dataSource)
        .settings(
            InboxSettings.builder()
                .schema(schema)
                .janitorInterval(Duration.ZERO)
                .lockTimeout(Duration.ofSeconds(5))
                .build())
        .migrate(true)
        .build();
  }

  @Test
  void execute_runs_the_handler_once_per_key() throws Exception {
    try (Inbox inbox = inbox()) {
      Execution first = inbox.execute("plain", "k-1", tx -> effect(tx, "k-1"));
      Execution second = inbox.execute("plain", "k-1", tx -> effect(tx, "k-1"));

      assertThat(first.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(second.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(effects("k-1")).isEqualTo(1);
    }
  }

  @Test
  void a_batch_runs_each_new_key_once() throws Exception {
    try (Inbox inbox = inbox()) {
      inbox.execute("plain", "b-2", tx -> effect(tx, "b-2"));

      BatchResult<String> result =
          inbox.executeBatch(
              "plain",
              List.of(BatchItem.of("b-1", "x"), BatchItem.of("b-2", "x"), BatchItem.of("b-3", "x")),
              BatchFailurePolicy.CONTINUE,
              (item, tx) -> effect(tx, item.key()));

      assertThat(result.items())
          .extracting(ItemResult::status)
          .containsExactly(ItemStatus.COMPLETED, ItemStatus.DUPLICATE, ItemStatus.COMPLETED);
      assertThat(effects("b-1") + effects("b-2") + effects("b-3")).isEqualTo(3);
    }
  }

  @Test
  void claim_and_complete_on_the_callers_connection_commit_with_its_work() throws Exception {
    try (Inbox inbox = inbox()) {
      try (Connection tx = dataSource.getConnection()) {
        tx.setAutoCommit(false);
        Claim claim = inbox.claim(tx, "plain", "c-1", null);
        assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
        effect(tx, "c-1");
        inbox.complete(tx, claim, null);
        tx.commit();
      }
      try (Connection tx = dataSource.getConnection()) {
        tx.setAutoCommit(false);
        assertThat(inbox.claim(tx, "plain", "c-1", null).outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        tx.rollback();
      }
      assertThat(effects("c-1")).isEqualTo(1);
    }
  }

  /**
   * The inbox tells an aborted transaction from pgjdbc's own connection, which a plain data source
   * hands out unwrapped, as it does through a pool's proxy.
   */
  @Test
  void a_handler_that_swallows_an_sql_error_fails_and_commits_nothing() throws Exception {
    try (Inbox inbox = inbox()) {
      assertThatThrownBy(
              () ->
                  inbox.execute(
                      "plain",
                      "a-1",
                      tx -> {
                        effect(tx, "a-1");
                        try (Statement s = tx.createStatement()) {
                          s.execute("SELECT 1/0");
                        } catch (SQLException swallowed) {
                          // carries on without a savepoint: the transaction is aborted
                        }
                        return null;
                      }))
          .isInstanceOf(HandlerFailedException.class);
      assertThat(effects("a-1")).isZero();
      assertThat(inbox.admin().find("plain", "a-1").orElseThrow().state())
          .isEqualTo(RecordState.FAILED);
    }
  }

  private StoredResult effect(Connection tx, String key) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement("INSERT INTO " + schema + ".effects (key) VALUES (?)")) {
      ps.setString(1, key);
      ps.executeUpdate();
    }
    return null;
  }

  private long effects(String key) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM " + schema + ".effects WHERE key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
