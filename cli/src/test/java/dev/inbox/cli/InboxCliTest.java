package dev.inbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.AuditEntry;
import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.LeaseLostException;
import dev.inbox.RecordState;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI in-process against real PostgreSQL: each test has its own schema with the inbox table, an
 * application's inbox that makes keys fail, lease and complete, and the CLI pointed at it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InboxCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> COMMANDS =
      List.of("stats", "list", "show", "release", "settle", "purge");

  private HikariDataSource dataSource;
  private String schema;
  private Inbox app;
  private final AtomicInteger effects = new AtomicInteger();

  @TempDir Path dir;

  @BeforeAll
  void openPool() {
    dataSource = TestDataSources.pool(4);
  }

  @AfterAll
  void closePool() {
    dataSource.close();
  }

  @BeforeEach
  void freshSchema() {
    schema = TestDataSources.newSchema("cli");
    app =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(
                InboxSettings.builder()
                    .schema(schema)
                    .maxAttempts(2)
                    .ownerId("worker-a")
                    .janitorInterval(Duration.ZERO)
                    .build())
            .migrate(true)
            .build();
    effects.set(0);
  }

  @AfterEach
  void closeApp() {
    app.close();
  }

  /**
   * {@code --lock-timeout} may be as long as the operator needs: a minute is accepted and the
   * release runs (the settings' lease, which the CLI never takes, is made longer than the wait, not
   * refused as bad usage).
   */
  @Test
  void a_lock_timeout_of_a_minute_is_accepted_and_the_release_runs() {
    CliRun run =
        CliRun.run(
            connection(),
            "release",
            "--lock-timeout",
            "60s",
            "--reason",
            "INC-1",
            "payments",
            "pay-unknown");

    // The key has no record: the release runs and answers "not found", exit 3.
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(InboxCli.EXIT_REFUSED);
    assertThat(run.err()).doesNotContain("leaseDuration");
  }

  private List<String> connection() {
    TestDatabase db = TestDatabase.shared();
    List<String> options = new ArrayList<>(List.of("--url", db.jdbcUrl(), "--schema", schema));
    if (db.user() != null) {
      options.add("--user=" + db.user());
    }
    if (db.password() != null) {
      options.add("--password=" + db.password());
    }
    options.add("--max-attempts=2");
    return options;
  }

  private CliRun cli(String... args) {
    return CliRun.run(connection(), args);
  }

  private Execution deliver(String scope, String key) {
    return app.execute(
        scope,
        key,
        tx -> {
          effects.incrementAndGet();
          return null;
        });
  }

  private void fail(String scope, String key) {
    assertThatThrownBy(
            () ->
                app.execute(
                    scope,
                    key,
                    tx -> {
                      throw new IllegalStateException("provider timed out");
                    }))
        .isInstanceOf(HandlerFailedException.class);
  }

  private void giveUp(String scope, String key) {
    fail(scope, key);
    fail(scope, key);
    assertThat(deliver(scope, key).outcome()).isEqualTo(ClaimOutcome.GAVE_UP);
  }

  @Test
  void every_command_answers_help_with_its_usage_and_exit_code_0() {
    CliRun top = CliRun.runExactly("--help");
    assertThat(top.exitCode()).as(top.toString()).isZero();
    assertThat(top.out()).contains("Usage: inbox", "Exit codes");
    COMMANDS.forEach(
        command -> {
          CliRun help = CliRun.runExactly(command, "--help");
          assertThat(help.exitCode()).as(help.toString()).isZero();
          assertThat(help.out()).contains("Usage: inbox " + command, "--url");
        });
  }

  @Test
  void bad_usage_exits_with_2_and_says_what_is_wrong() {
    CliRun none = CliRun.runExactly();
    assertThat(none.exitCode()).isEqualTo(2);
    assertThat(none.err()).contains("Missing command");

    CliRun noReason = cli("release", "payments", "p-1");
    assertThat(noReason.exitCode()).isEqualTo(2);
    assertThat(noReason.err()).contains("--reason");

    CliRun badStatus = cli("settle", "payments", "p-1", "--status", "42", "--reason", "r");
    assertThat(badStatus.exitCode()).as(badStatus.toString()).isEqualTo(2);
    assertThat(badStatus.err()).contains("--status must be between 100 and 599, but was 42");

    CliRun badAge = cli("list", "--older-than", "soon");
    assertThat(badAge.exitCode()).isEqualTo(2);
    assertThat(badAge.err()).contains("'soon' is not a duration");

    CliRun badKey = cli("show", "payments", "bad\nkey");
    assertThat(badKey.exitCode()).as(badKey.toString()).isEqualTo(2);
    assertThat(badKey.err()).contains("invalid key");

    CliRun notPostgres = CliRun.runExactly("stats", "--url", "jdbc:mysql://db/x?password=hunter2");
    assertThat(notPostgres.exitCode()).isEqualTo(2);
    assertThat(notPostgres.err()).contains("PostgreSQL JDBC URL").doesNotContain("hunter2");
  }

  @Test
  void an_unreachable_database_exits_with_1_and_never_prints_the_password() {
    CliRun run =
        CliRun.runExactly(
            "stats", "--url", "jdbc:postgresql://127.0.0.1:1/test?password=hunter2&user=x");
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
    assertThat(run.err()).contains("connection refused").doesNotContain("hunter2");
    assertThat(run.out()).isEmpty();
  }

  @Test
  void stats_counts_per_scope_and_state_as_text_and_json() throws Exception {
    deliver("payments", "p-1");
    deliver("payments", "p-2");
    giveUp("payments", "p-3");
    app.leases().claim("mail", "m-1", null);

    CliRun text = cli("stats");
    assertThat(text.exitCode()).as(text.toString()).isZero();
    assertThat(text.out())
        .contains(schema + ".inbox", "oldest lease", "last purge     none recorded")
        .containsPattern("payments\\s+COMPLETED\\s+2\\s+0\\s+0")
        .containsPattern("payments\\s+FAILED\\s+1\\s+0\\s+1")
        .containsPattern("mail\\s+IN_PROGRESS\\s+1\\s+0\\s+0");

    JsonNode json = JSON.readTree(cli("stats", "--json").out());
    assertThat(json.get("counts")).hasSize(3);
    assertThat(json.get("counts").get(0).get("scope").asText()).isEqualTo("mail");
    assertThat(json.get("counts").get(2).get("gaveUp").asLong()).isEqualTo(1);
    assertThat(json.get("tableBytes").asLong()).isPositive();
    assertThat(json.get("lastPurgeAt").isNull()).isTrue();
  }

  @Test
  void list_filters_and_pages_with_a_cursor_as_text_and_json() throws Exception {
    for (int i = 1; i <= 5; i++) {
      deliver("payments", "p-" + i);
    }
    fail("payments", "f-1");
    deliver("refunds", "r-1");

    CliRun first = cli("list", "--scope", "payments", "--limit", "4");
    assertThat(first.exitCode()).as(first.toString()).isZero();
    assertThat(first.out()).contains("SCOPE", "f-1", "p-1", "p-3").doesNotContain("p-4", "r-1");
    String cursor = first.out().replaceAll("(?s).*--after (\\S+)\\s*$", "$1");

    JsonNode rest =
        JSON.readTree(cli("list", "--scope", "payments", "--after", cursor, "--json").out());
    assertThat(rest.get("records").findValuesAsText("key")).containsExactly("p-4", "p-5");
    assertThat(rest.get("next").isNull()).isTrue();

    JsonNode failed =
        JSON.readTree(cli("list", "--state", "FAILED", "--min-attempts", "1", "--json").out());
    assertThat(failed.get("records").findValuesAsText("key")).containsExactly("f-1");
    assertThat(failed.get("records").get(0).get("attempts").asInt()).isEqualTo(1);

    CliRun old = cli("list", "--older-than", "1h");
    assertThat(old.exitCode()).isZero();
    assertThat(old.out()).contains("no keys match");
  }

  @Test
  void show_prints_the_record_its_lease_and_result_and_exits_3_for_an_unknown_key()
      throws Exception {
    Claim claim = app.leases().claim("mail", "m-1", null);
    CliRun text = cli("show", "mail", "m-1");
    assertThat(text.exitCode()).as(text.toString()).isZero();
    assertThat(text.out())
        .contains(
            "IN_PROGRESS",
            "live",
            "owner worker-a",
            "fencing token  " + claim.leaseToken().fencingToken())
        .contains("no operator has changed this key");

    JsonNode json = JSON.readTree(cli("show", "mail", "m-1", "--json").out());
    assertThat(json.get("record").get("leaseLive").asBoolean()).isTrue();
    assertThat(json.get("record").get("leaseOwner").asText()).isEqualTo("worker-a");

    CliRun unknown = cli("show", "mail", "nobody");
    assertThat(unknown.exitCode()).isEqualTo(InboxCli.EXIT_REFUSED);
    assertThat(unknown.out()).contains("no record");
  }

  @Test
  void release_frees_a_key_that_gave_up_for_exactly_one_more_run_and_audits_the_os_user()
      throws Exception {
    giveUp("payments", "p-1");

    CliRun release = cli("release", "payments", "p-1", "--reason", "INC-7 provider is back");
    assertThat(release.exitCode()).as(release.toString()).isZero();
    assertThat(release.out())
        .contains(
            "released key 'p-1' in scope 'payments'",
            "was FAILED (attempts 2",
            "now FAILED (attempts 0");

    assertThat(deliver("payments", "p-1").outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(deliver("payments", "p-1").outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects.get()).isEqualTo(1);

    List<AuditEntry> audit = app.admin().show("payments", "p-1").history();
    assertThat(audit)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.actor()).isEqualTo(System.getProperty("user.name"));
              assertThat(e.reason()).isEqualTo("INC-7 provider is back");
            });

    CliRun again = cli("release", "payments", "p-1", "--reason", "again");
    assertThat(again.exitCode()).as("a completed key is never released").isEqualTo(3);
    assertThat(again.err()).contains("COMPLETED", "Nothing was changed");
    CliRun unknown = cli("release", "payments", "nobody", "--reason", "typo?");
    assertThat(unknown.exitCode()).isEqualTo(3);
    assertThat(unknown.err()).contains("no record");
  }

  @Test
  void release_of_a_live_lease_needs_force_and_then_fences_off_the_holder() throws Exception {
    Claim claim = app.leases().claim("charges", "ch-1", null);

    CliRun refused = cli("release", "charges", "ch-1", "--reason", "stuck?");
    assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(3);
    assertThat(refused.err()).contains("live lease", "worker-a", "double effect", "--force");
    assertThat(app.admin().find("charges", "ch-1").orElseThrow().state())
        .isEqualTo(RecordState.IN_PROGRESS);

    CliRun forced =
        cli(
            "release",
            "charges",
            "ch-1",
            "--reason",
            "worker-a is dead",
            "--force",
            "--actor",
            "carol");
    assertThat(forced.exitCode()).as(forced.toString()).isZero();
    assertThat(forced.err()).contains("WARNING: forced", "worker-a");
    assertThatThrownBy(() -> app.leases().complete(claim.leaseToken(), null))
        .isInstanceOf(LeaseLostException.class);
    assertThat(app.admin().show("charges", "ch-1").history())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.actor()).isEqualTo("carol");
              assertThat(e.forced()).isTrue();
            });
  }

  @Test
  void settle_stores_the_operators_result_which_every_later_claim_gets_as_a_duplicate()
      throws Exception {
    fail("payments", "p-1");
    Path body = dir.resolve("body.json");
    Files.writeString(body, "{\"id\":\"pay_1\",\"status\":\"paid\"}");

    CliRun settle =
        cli(
            "settle",
            "payments",
            "p-1",
            "--status",
            "201",
            "--body",
            body.toString(),
            "--header",
            "Content-Type: application/json",
            "--reason",
            "provider: paid");
    assertThat(settle.exitCode()).as(settle.toString()).isZero();
    assertThat(settle.out()).contains("settled key 'p-1'", "now COMPLETED", "status 201");

    Execution duplicate = deliver("payments", "p-1");
    assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(duplicate.result().status()).isEqualTo(201);
    assertThat(duplicate.result().headers())
        .containsEntry("Content-Type", List.of("application/json"));
    assertThat(new String(duplicate.result().body().orElseThrow(), StandardCharsets.UTF_8))
        .isEqualTo("{\"id\":\"pay_1\",\"status\":\"paid\"}");
    assertThat(effects.get()).isZero();

    JsonNode shown = JSON.readTree(cli("show", "payments", "p-1", "--json").out());
    assertThat(
            Base64.getDecoder()
                .decode(shown.get("record").get("result").get("bodyBase64").asText()))
        .isEqualTo(Files.readAllBytes(body));
    assertThat(shown.get("audit").get(0).get("before").get("state").asText()).isEqualTo("FAILED");
    assertThat(shown.get("audit").get(0).get("after").get("state").asText()).isEqualTo("COMPLETED");

    CliRun again = cli("settle", "payments", "p-1", "--status", "500", "--reason", "oops");
    assertThat(again.exitCode()).isEqualTo(3);
    assertThat(again.err()).contains("its result stands");
    CliRun unknown = cli("settle", "payments", "p-124", "--status", "201", "--reason", "typo");
    assertThat(unknown.exitCode()).as(unknown.toString()).isEqualTo(3);
    assertThat(unknown.err()).contains("no record", "--create", "Nothing was changed");
    assertThat(app.admin().find("payments", "p-124")).isEmpty();
    CliRun created =
        cli(
            "settle",
            "payments",
            "p-124",
            "--status",
            "201",
            "--reason",
            "lost record",
            "--create");
    assertThat(created.exitCode()).as(created.toString()).isZero();
    assertThat(deliver("payments", "p-124").outcome()).isEqualTo(ClaimOutcome.DUPLICATE);

    CliRun missingBody =
        cli(
            "settle",
            "payments",
            "p-2",
            "--status",
            "200",
            "--body",
            dir.resolve("nope").toString(),
            "--reason",
            "r");
    assertThat(missingBody.exitCode()).isEqualTo(1);
    assertThat(missingBody.err()).contains("no such file", "nothing was changed");
    assertThat(app.admin().find("payments", "p-2")).isEmpty();
  }

  @Test
  void json_output_round_trips_quotes_newlines_and_text_outside_ascii() throws Exception {
    giveUp("zahlungen", "платёж-\"1\"");
    String reason = "Ticket \"ÄÖÜ-7\":\tAnbieter sagt \\ bezahlt\n(zweite Zeile) 💶";
    CliRun release =
        cli("release", "zahlungen", "платёж-\"1\"", "--reason", reason, "--actor", "jürgen");
    assertThat(release.exitCode()).as(release.toString()).isZero();

    JsonNode shown = JSON.readTree(cli("show", "zahlungen", "платёж-\"1\"", "--json").out());
    assertThat(shown.get("key").asText()).isEqualTo("платёж-\"1\"");
    assertThat(shown.get("audit").get(0).get("reason").asText()).isEqualTo(reason);
    assertThat(shown.get("audit").get(0).get("actor").asText()).isEqualTo("jürgen");
    assertThat(shown.get("audit").get(0).get("before").get("key").asText())
        .isEqualTo("платёж-\"1\"");
    JsonNode listed = JSON.readTree(cli("list", "--scope", "zahlungen", "--json").out());
    assertThat(listed.get("records").get(0).get("lastError").asText())
        .contains("provider timed out");
  }

  @Test
  void purge_counts_with_dry_run_deletes_only_with_yes_and_demands_one_of_them() throws Exception {
    deliver("payments", "p-1");
    deliver("payments", "p-2");
    sql("UPDATE " + schema + ".inbox SET completed_at = completed_at - interval '2 days'");

    CliRun neither = cli("purge");
    assertThat(neither.exitCode()).isEqualTo(2);
    assertThat(neither.err()).contains("--dry-run", "--yes");

    CliRun dryRun = cli("purge", "--dry-run");
    assertThat(dryRun.exitCode()).as(dryRun.toString()).isZero();
    assertThat(dryRun.out()).contains("2 records", "nothing was deleted");
    assertThat(app.admin().find("payments", "p-1")).isPresent();

    CliRun shortRetention = cli("purge", "--dry-run", "--retention", "3d");
    assertThat(shortRetention.out()).startsWith("0 records");

    CliRun yes = cli("purge", "--yes");
    assertThat(yes.exitCode()).isZero();
    assertThat(yes.out()).contains("deleted 2 records");
    assertThat(app.admin().find("payments", "p-1")).isEmpty();
    assertThat(cli("stats").out()).contains("deleted 2 rows");
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
