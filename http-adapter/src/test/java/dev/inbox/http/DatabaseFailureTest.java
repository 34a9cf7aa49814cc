package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.testing.TestDatabase;
import java.io.ByteArrayOutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The database failing under the filter: refusing connections, its pool exhausted, the request's
 * backend terminated, its table gone. Clients must get problem details, 503 with Retry-After while
 * the database is unavailable and 500 otherwise, that name no exception, SQL, host or port; the
 * server's log gets the detail, and never a password.
 */
class DatabaseFailureTest extends FilterTestBase {
  private static final String PASSWORD = "pw-that-must-never-leak";

  /**
   * Makes the handler run a statement that fails with a serialization failure, or on a dead
   * connection; outside the fingerprint, so that a retry without it is the same request.
   */
  private static final String FAIL_ON_STATEMENT = "X-Fail: serialization";

  @ParameterizedTest
  @EnumSource(IdempotencyFilter.Mode.class)
  void a_database_that_refuses_connections_gets_503_with_retry_after_and_no_internals(
      IdempotencyFilter.Mode mode) throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    SwitchableDataSource database = new SwitchableDataSource(dataSource);
    try (Inbox switchable = inboxOn(database);
        TestServer down = new TestServer(switchable, database, effects, 0, b -> b.mode(mode))) {
      database.target = SwitchableDataSource.refusing(closedPort, PASSWORD);

      ByteArrayOutputStream log = new ByteArrayOutputStream();
      RawHttp.Response answer =
          capturingStandardError(
              log, () -> RawHttp.post(down.port(), "/payments", "key-a", "down-1", "100"));

      assertProblem(answer, 503, "database-unavailable", "retry");
      assertThat(answer.header("Retry-After"))
          .hasValueSatisfying(s -> assertThat(s).matches("[1-9][0-9]*"));
      assertNoInternals(answer, Integer.toString(closedPort));
      String logged = log.toString(StandardCharsets.UTF_8);
      assertThat(logged).as("the server log").contains("'down-1'").contains("refused");
      assertThat(logged).as("the server log").doesNotContain(PASSWORD);
      assertThat(down.runs).as("handler runs").hasValue(0);

      database.target = dataSource;
      RawHttp.Response retry = RawHttp.post(down.port(), "/payments", "key-a", "down-1", "100");
      assertThat(retry.status()).as(retry.body()).isEqualTo(201);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }

  @Test
  void an_exhausted_pool_gets_503_with_retry_after() throws Exception {
    TestDatabase db = TestDatabase.shared();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setMaximumPoolSize(1);
    config.setConnectionTimeout(250);
    try (HikariDataSource one = new HikariDataSource(config)) {
      try (Inbox small = inboxOn(one);
          TestServer starved = new TestServer(small, one, effects, 0)) {
        RawHttp.Response answer;
        try (Connection held = one.getConnection()) {
          answer = RawHttp.post(starved.port(), "/payments", "key-a", "pool-1", "100");
        }
        assertProblem(answer, 503, "database-unavailable", "retry");
        assertThat(answer.header("Retry-After")).isPresent();
        assertNoInternals(answer, "Connection is not available");
        assertThat(starved.runs).as("handler runs").hasValue(0);

        RawHttp.Response retry =
            RawHttp.post(starved.port(), "/payments", "key-a", "pool-1", "100");
        assertThat(retry.status()).as(retry.body()).isEqualTo(201);
        assertThat(effects.count()).as("effect rows").isEqualTo(1);
      }
    }
  }

  @Test
  void a_backend_terminated_mid_request_gets_503_and_the_retry_runs_exactly_once()
      throws Exception {
    CompletableFuture<RawHttp.Response> first =
        postInBackground(server.port(), "/payments?gate=1", "term-1");
    terminateTheBackendWritingEffects();
    server.gate.countDown();

    RawHttp.Response answer = first.get(60, TimeUnit.SECONDS);
    assertProblem(answer, 503, "database-unavailable", "retry");
    assertNoInternals(answer, "terminat");
    assertThat(effects.count()).as("effect rows after the terminated backend").isZero();

    RawHttp.Response retry =
        RawHttp.post(server.port(), "/payments?gate=1", "key-a", "term-1", "100");
    RawHttp.Response again =
        RawHttp.post(server.port(), "/payments?gate=1", "key-a", "term-1", "100");
    assertThat(retry.status()).as(retry.body()).isEqualTo(201);
    assertThat(retry.replayed()).isFalse();
    assertThat(again.replayed()).isTrue();
    assertThat(effects.count()).as("effect rows after the retries").isEqualTo(1);
  }

  @Test
  void a_handler_whose_own_statement_meets_a_terminated_backend_gets_503_without_internals()
      throws Exception {
    CompletableFuture<RawHttp.Response> first =
        postInBackground(server.port(), "/payments?gate=1", "term-2", FAIL_ON_STATEMENT);
    terminateTheBackendWritingEffects();
    server.gate.countDown();

    RawHttp.Response answer = first.get(60, TimeUnit.SECONDS);
    assertProblem(answer, 503, "database-unavailable", "retry after 5 s with the same");
    assertThat(answer.header("Retry-After")).hasValue("5");
    assertNoInternals(answer, "terminat");
    assertThat(effects.count()).as("effect rows after the terminated backend").isZero();

    RawHttp.Response retry =
        RawHttp.post(server.port(), "/payments?gate=1", "key-a", "term-2", "100");
    assertThat(retry.status()).as(retry.body()).isEqualTo(201);
    assertThat(retry.replayed()).isFalse();
    assertThat(effects.count()).as("effect rows after the retry").isEqualTo(1);
  }

  @Test
  void a_serialization_failure_in_the_handler_gets_503_without_internals() throws Exception {
    RawHttp.Response answer =
        RawHttp.post(server.port(), "/payments", "key-a", "ser-1", "100", FAIL_ON_STATEMENT);
    assertProblem(answer, 503, "transaction-conflict", "retry after 1 s with the same");
    assertThat(answer.header("Retry-After")).hasValue("1");
    assertNoInternals(answer, "concurrent update");
    assertThat(effects.count()).as("effect rows after the serialization failure").isZero();

    RawHttp.Response retry = RawHttp.post(server.port(), "/payments", "key-a", "ser-1", "100");
    assertThat(retry.status()).as(retry.body()).isEqualTo(201);
    assertThat(effects.count()).as("effect rows after the retry").isEqualTo(1);
  }

  @Test
  void an_application_exception_still_goes_to_the_containers_error_handling() throws Exception {
    RawHttp.Response answer =
        RawHttp.post(server.port(), "/payments", "key-a", "app-1", "100", "X-Fail: throw");
    assertThat(answer.status()).isEqualTo(500);
    assertThat(answer.header("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
    assertThat(effects.count()).isZero();
  }

  @ParameterizedTest
  @EnumSource(CommitCuttingProxy.Cut.class)
  void a_connection_lost_mid_commit_gets_503_and_the_retry_takes_effect_once(
      CommitCuttingProxy.Cut cut) throws Exception {
    TestDatabase db = TestDatabase.shared();
    try (CommitCuttingProxy proxy = new CommitCuttingProxy(db.jdbcUrl())) {
      HikariConfig config = new HikariConfig();
      config.setJdbcUrl(proxy.jdbcUrl(db.jdbcUrl()));
      config.setUsername(db.user());
      config.setPassword(db.password());
      config.setMaximumPoolSize(4);
      try (HikariDataSource proxied = new HikariDataSource(config);
          Inbox viaProxy = inboxOn(proxied);
          TestServer cutting = new TestServer(viaProxy, proxied, effects, 0)) {
        proxy.cutAtNextCommit(cut, () -> effects.count() == 1);

        RawHttp.Response answer =
            RawHttp.post(cutting.port(), "/payments", "key-a", "cut-1", "100");
        assertThat(proxy.cuts).as("connections cut").hasValue(1);
        assertProblem(answer, 503, "database-unavailable", "retry");
        assertNoInternals(answer, "I/O");

        RawHttp.Response retry = RawHttp.post(cutting.port(), "/payments", "key-a", "cut-1", "100");
        assertThat(retry.status()).as(retry.body()).isEqualTo(201);
        assertThat(retry.replayed())
            .as("the retry replays what the server committed")
            .isEqualTo(cut == CommitCuttingProxy.Cut.AFTER_COMMIT);
        assertThat(effects.count()).as("effect rows").isEqualTo(1);
      }
    }
  }

  @Test
  void an_unexpected_database_error_gets_500_without_internals() throws Exception {
    try (Connection admin = TestDatabase.shared().connect();
        Statement s = admin.createStatement()) {
      s.execute("DROP TABLE " + schema + ".inbox");
    }
    RawHttp.Response answer = RawHttp.post(server.port(), "/payments", "key-a", "gone-1", "100");
    assertProblem(answer, 500, "internal-error", "logged");
    assertThat(answer.header("Retry-After")).isEmpty();
    assertNoInternals(answer, "relation");
    assertThat(answer.body()).doesNotContain(schema).doesNotContain("inbox\"");
    assertThat(server.runs).as("handler runs").hasValue(0);
    assertThat(effects.count()).as("effect rows").isZero();
  }

  private Inbox inboxOn(DataSource source) {
    return Inbox.builder()
        .dataSource(source)
        .settings(FilterTestBase.settings(schema).build())
        .build();
  }

  private static void assertNoInternals(RawHttp.Response answer, String alsoAbsent) {
    assertThat(answer.body())
        .as("the body names no internals")
        .doesNotContainIgnoringCase("exception")
        .doesNotContain("org.")
        .doesNotContain("java.")
        .doesNotContain("SQL")
        .doesNotContain("127.0.0.1")
        .doesNotContain("localhost")
        .doesNotContain("postgres")
        .doesNotContain(PASSWORD)
        .doesNotContain(alsoAbsent)
        .doesNotContain("<html");
  }
}
