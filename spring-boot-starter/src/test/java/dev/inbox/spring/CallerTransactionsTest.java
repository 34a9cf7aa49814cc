package dev.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The auto-configured Inbox joins the Spring transaction of the calling thread: a JdbcTemplate
 * write inside the handler commits with its key, and rolls back with it.
 */
@SpringBootTest(classes = TestApplication.class, properties = "inbox.schema=boot_caller_tx")
class CallerTransactionsTest {
  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
  }

  @Autowired Inbox inbox;
  @Autowired JdbcTemplate jdbc;
  @Autowired TransactionTemplate transactions;

  @BeforeEach
  void effectsTable() {
    jdbc.execute("CREATE TABLE IF NOT EXISTS boot_caller_tx.effects (key text PRIMARY KEY)");
  }

  @Test
  void writes_in_the_handler_commit_with_the_key_and_a_duplicate_has_no_effect() {
    String key = UUID.randomUUID().toString();
    for (int delivery = 0; delivery < 3; delivery++) {
      transactions.executeWithoutResult(status -> run(key));
    }
    assertThat(effects(key)).isEqualTo(1);
    assertThat(inbox.admin().lookup("payments", key, null))
        .get()
        .extracting(c -> c.outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
  }

  @Test
  void a_rollback_of_the_spring_transaction_takes_the_key_and_the_writes_back() {
    String key = UUID.randomUUID().toString();
    assertThatThrownBy(
            () ->
                transactions.executeWithoutResult(
                    status -> {
                      run(key);
                      throw new IllegalStateException("the caller fails after the handler");
                    }))
        .hasMessage("the caller fails after the handler");
    assertThat(effects(key)).isZero();
    assertThat(inbox.admin().find("payments", key)).isEmpty();

    transactions.executeWithoutResult(status -> run(key));
    assertThat(effects(key)).isEqualTo(1);
  }

  @Test
  void without_a_spring_transaction_the_inbox_begins_its_own() {
    String key = UUID.randomUUID().toString();
    Execution first = runOnInboxConnection(key);
    Execution second = runOnInboxConnection(key);
    assertThat(first.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(second.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects(key)).isEqualTo(1);
  }

  private Execution run(String key) {
    return inbox.execute(
        "payments",
        key,
        tx -> {
          jdbc.update("INSERT INTO boot_caller_tx.effects (key) VALUES (?)", key);
          return null;
        });
  }

  /** Outside a Spring transaction, JdbcTemplate would not be in the inbox's: write through tx. */
  private Execution runOnInboxConnection(String key) {
    return inbox.execute(
        "payments",
        key,
        tx -> {
          try (var insert =
              tx.prepareStatement("INSERT INTO boot_caller_tx.effects (key) VALUES (?)")) {
            insert.setString(1, key);
            insert.executeUpdate();
          }
          return null;
        });
  }

  private int effects(String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_caller_tx.effects WHERE key = ?", Integer.class, key);
  }
}
