package dev.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A joined {@code execute}'s failed attempt is counted inside the caller's Spring transaction and,
 * after a rollback, again in its {@code afterCompletion} on the caller's connection: the count must
 * bound the attempts made within one transaction, and survive a connection that broke before the
 * transaction ended.
 */
@SpringBootTest(
    classes = TestApplication.class,
    properties = {"inbox.schema=boot_joined_failure_count", "inbox.max-attempts=3"})
class JoinedFailureCountTest {
  private static final String SCOPE = "joined-failures";

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
  }

  @Autowired Inbox inbox;
  @Autowired JdbcTemplate jdbc;
  @Autowired DataSource dataSource;

  private TransactionTemplate jdbcTransactions() {
    return new TransactionTemplate(new DataSourceTransactionManager(dataSource));
  }

  /**
   * The handler fails (a genuine, countable failure); the caller catches the HandlerFailedException
   * and goes on, and its connection is lost before its transaction ends (a failover, a network
   * blip, idle_in_transaction_session_timeout). The count after the rollback cannot be written on
   * that connection, and is written on one of the pool's.
   */
  @Test
  void a_failure_is_counted_although_the_callers_connection_breaks_before_its_transaction_ends() {
    String key = "broken-" + UUID.randomUUID();
    assertThatThrownBy(
            () ->
                jdbcTransactions()
                    .executeWithoutResult(
                        status -> {
                          assertThatThrownBy(
                                  () ->
                                      inbox.execute(
                                          SCOPE,
                                          key,
                                          tx -> {
                                            throw new IllegalStateException("card declined");
                                          }))
                              .isInstanceOf(HandlerFailedException.class);
                          Integer pid =
                              jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
                          terminate(pid);
                          status.setRollbackOnly();
                        }))
        .as("the rollback on the terminated connection fails")
        .isNotNull();
    InboxRecord record = inbox.admin().find(SCOPE, key).orElse(null);
    assertThat(record).as("the handler's failed attempt was counted").isNotNull();
    assertThat(record.attempts()).isEqualTo(1);
  }

  /**
   * A caller that retries a failing key inside one transaction: each failed attempt is counted in
   * that transaction, so the fourth execute is answered GAVE_UP under inbox.max-attempts=3.
   */
  @Test
  void max_attempts_still_bounds_the_attempts_made_within_one_callers_transaction() {
    String key = "loop-" + UUID.randomUUID();
    AtomicInteger handlerRuns = new AtomicInteger();
    jdbcTransactions()
        .executeWithoutResult(
            status -> {
              for (int i = 0; i < 6; i++) {
                try {
                  inbox.execute(
                      SCOPE,
                      key,
                      tx -> {
                        handlerRuns.incrementAndGet();
                        throw new IllegalStateException("card declined");
                      });
                } catch (HandlerFailedException expected) {
                  // retried by the caller
                }
              }
            });
    assertThat(inbox.admin().find(SCOPE, key).orElseThrow().attempts())
        .as("attempts recorded")
        .isLessThanOrEqualTo(3);
    assertThat(handlerRuns.get()).as("handler runs under inbox.max-attempts=3").isEqualTo(3);
  }

  private static void terminate(int pid) {
    TestDatabase db = TestDatabase.shared();
    try (Connection admin = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        PreparedStatement kill = admin.prepareStatement("SELECT pg_terminate_backend(?)")) {
      kill.setInt(1, pid);
      try (ResultSet rs = kill.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).as("backend terminated").isTrue();
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
