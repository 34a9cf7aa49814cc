package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.TestDataSources;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * The filter in a real Jetty 12 on a real PostgreSQL. Each test gets a fresh schema with the inbox
 * table and an effects table without a unique constraint, so that a doubled execution shows up as a
 * second row, and a {@link TestServer} on it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FilterTestBase {
  HikariDataSource dataSource;
  String schema;
  EffectsTable effects;
  Inbox inbox;
  TestServer server;

  @BeforeAll
  void pool() {
    dataSource = TestDataSources.pool(40);
  }

  @AfterAll
  void closePool() {
    dataSource.close();
  }

  @BeforeEach
  void start() throws Exception {
    schema = TestDataSources.newSchema("http");
    effects = new EffectsTable(dataSource, schema);
    effects.create();
    inbox = inbox(Duration.ofSeconds(5));
    server = new TestServer(inbox, dataSource, effects, 0);
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
    inbox.close();
  }

  Inbox inbox(Duration lockTimeout) {
    return Inbox.builder()
        .dataSource(dataSource)
        .settings(
            InboxSettings.builder()
                .schema(schema)
                .janitorInterval(Duration.ZERO)
                .lockTimeout(lockTimeout)
                .build())
        .migrate(true)
        .build();
  }

  static void await(String what, Callable<Boolean> condition) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after 20 s waiting until " + what);
      }
      Thread.sleep(20);
    }
  }

  static void assertProblem(RawHttp.Response response, int status, String rule, String detail) {
    assertThat(response.status()).as(response.body()).isEqualTo(status);
    assertThat(response.header("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    assertThat(response.body())
        .startsWith("{\"type\":\"about:blank\",")
        .contains("\"status\":" + status)
        .contains("\"rule\":\"" + rule + "\"")
        .contains(detail);
  }
}
