package dev.inbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code --lock-timeout}, "how long release and settle wait for a claimant holding the key", may be
 * as long as the operator needs: a minute is accepted and the release runs (the settings' lease,
 * which the CLI never takes, is made longer than the wait, not refused as bad usage).
 */
class CliLockTimeoutTest {
  private HikariDataSource dataSource;
  private String schema;
  private Inbox app;

  @BeforeEach
  void open() {
    dataSource = TestDataSources.pool(2);
    schema = TestDataSources.newSchema("cli29b");
    app =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(InboxSettings.builder().schema(schema).janitorInterval(Duration.ZERO).build())
            .migrate(true)
            .build();
  }

  @AfterEach
  void close() {
    app.close();
    dataSource.close();
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
    return options;
  }

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
}
