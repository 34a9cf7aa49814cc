package dev.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.testing.TestDatabase;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A pool configured {@code auto-commit=false} (the usual companion of Hibernate's {@code
 * provider_disables_autocommit}), and a transaction of another manager than the inbox DataSource's
 * (Kafka's, JTA's, a second DataSource's) in which JdbcTemplate has already touched the inbox's
 * DataSource: JdbcTemplate binds its connection to the thread with a ConnectionSynchronization, and
 * that connection is not in auto-commit mode, yet no transaction manager will ever commit it (the
 * ConnectionSynchronization hands it back to the pool in beforeCompletion, and Hikari rolls it
 * back): SpringCallerTransactions must not join it, and the inbox begins a transaction of its own.
 */
@SpringBootTest(
    classes = TestApplication.class,
    properties = {
      "inbox.schema=boot_autocommit_off",
      "inbox.max-attempts=3",
      "spring.datasource.hikari.auto-commit=false"
    })
class AutoCommitOffPoolTest {
  private static final String SCOPE = "autocommit-off";

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
  }

  @Autowired Inbox inbox;
  @Autowired JdbcTemplate jdbc;

  /** A transaction of a manager that does not manage the inbox's DataSource. */
  private static TransactionTemplate anotherManagersTransactions() {
    TestDatabase db = TestDatabase.shared();
    return new TransactionTemplate(
        new DataSourceTransactionManager(
            new DriverManagerDataSource(db.jdbcUrl(), db.user(), db.password())));
  }

  /** The failed attempt is counted: not on JdbcTemplate's connection, which the pool rolls back. */
  @Test
  void a_failure_in_another_managers_transaction_is_counted() {
    String key = "other-tm-" + UUID.randomUUID();
    anotherManagersTransactions()
        .executeWithoutResult(
            status -> {
              jdbc.queryForObject("SELECT 1", Integer.class);
              assertThatThrownBy(
                      () ->
                          inbox.execute(
                              SCOPE,
                              key,
                              tx -> {
                                throw new IllegalStateException("card declined");
                              }))
                  .isInstanceOf(HandlerFailedException.class);
            });
    InboxRecord record = inbox.admin().find(SCOPE, key).orElse(null);
    assertThat(record).as("the failed attempt was counted").isNotNull();
    assertThat(record.attempts()).isEqualTo(1);
  }

  /** A handled key is committed: not on JdbcTemplate's connection, which the pool rolls back. */
  @Test
  void a_success_in_another_managers_transaction_commits_its_key() {
    String key = "other-tm-ok-" + UUID.randomUUID();
    Execution first =
        anotherManagersTransactions()
            .execute(
                status -> {
                  jdbc.queryForObject("SELECT 1", Integer.class);
                  return inbox.execute(SCOPE, key, tx -> null);
                });
    assertThat(first.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(inbox.admin().find(SCOPE, key)).as("the handled key was recorded").isPresent();
  }
}
