package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import dev.inbox.testing.TestStorage;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
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

  /**
   * The tests' settings: no janitor, and the storage that {@code inbox.test.storage} names, so that
   * the suite runs on either layout.
   */
  static InboxSettings.Builder settings(String schema) {
    return InboxSettings.builder()
        .schema(schema)
        .storage(Storage.valueOf(TestStorage.name()))
        .janitorInterval(Duration.ZERO);
  }

  /**
   * Skips the test unless the suite runs on {@code storage}: the two layouts answer its scenario
   * differently by design (docs/scale.md, Limits), for the reason given.
   */
  static void assumeStorage(Storage storage, String whyTheOtherStorageDiffers) {
    assumeTrue(
        Storage.valueOf(TestStorage.name()) == storage,
        "not on " + storage + " storage: " + whyTheOtherStorageDiffers);
  }

  Inbox inbox(Duration lockTimeout) {
    return Inbox.builder()
        .dataSource(dataSource)
        .settings(settings(schema).lockTimeout(lockTimeout).build())
        .migrate(true)
        .build();
  }

  /** The backends whose open transactions hold a write on this test's effects table. */
  List<Integer> backendsWritingEffects() throws SQLException {
    try (Connection c = TestDatabase.shared().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_class t ON t.oid = l.relation"
                    + " JOIN pg_namespace n ON n.oid = t.relnamespace"
                    + " WHERE n.nspname = '"
                    + schema
                    + "' AND t.relname = 'effects' AND l.mode = 'RowExclusiveLock'")) {
      List<Integer> pids = new ArrayList<>();
      while (rs.next()) {
        pids.add(rs.getInt(1));
      }
      return pids;
    }
  }

  /**
   * Terminates the backend whose open transaction holds a write on the effects table, once a
   * handler has written and holds it open.
   */
  void terminateTheBackendWritingEffects() throws Exception {
    await("the handler holds its uncommitted write", () -> !backendsWritingEffects().isEmpty());
    try (Connection admin = TestDatabase.shared().connect();
        Statement s = admin.createStatement()) {
      s.execute("SELECT pg_terminate_backend(" + backendsWritingEffects().get(0) + ")");
    }
  }

  /** POSTs 100 for tenant-a with the key (and further header lines) on another thread. */
  static CompletableFuture<RawHttp.Response> postInBackground(
      int port, String target, String key, String... headerLines) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return RawHttp.post(port, target, "key-a", key, "100", headerLines);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
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

  /** Runs the call with the standard error (where slf4j-simple logs) copied into {@code log}. */
  static <T> T capturingStandardError(ByteArrayOutputStream log, Callable<T> call)
      throws Exception {
    PrintStream original = System.err;
    System.setErr(
        new PrintStream(
            new OutputStream() {
              @Override
              public void write(int b) {
                original.write(b);
                log.write(b);
              }

              @Override
              public void write(byte[] b, int off, int len) {
                original.write(b, off, len);
                log.write(b, off, len);
              }
            },
            true,
            StandardCharsets.UTF_8));
    try {
      return call.call();
    } finally {
      System.setErr(original);
    }
  }
}
