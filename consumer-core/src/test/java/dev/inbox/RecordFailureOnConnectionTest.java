package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * {@code recordFailure} counts a failed attempt on the caller's connection, in a transaction of its
 * own, after the caller rolled back: it never needs a second connection of a pool the caller may
 * hold entirely, and it never commits work of the caller's.
 */
class RecordFailureOnConnectionTest extends InboxTestSupport {

  @Test
  void a_caller_holding_the_pools_only_connection_gets_its_failure_counted() throws Exception {
    try (HikariDataSource onlyOne = TestDataSources.pool(1)) {
      onlyOne.getHikariConfigMXBean().setConnectionTimeout(500);
      Inbox inbox = inbox(s -> s.maxAttempts(2));
      Inbox onOnePool =
          Inbox.builder().dataSource(onlyOne).settings(settings().maxAttempts(2).build()).build();
      inboxes.add(onOnePool);
      try (Connection tx = onlyOne.getConnection()) {
        tx.setAutoCommit(false);
        for (int attempt = 1; attempt <= 2; attempt++) {
          Claim claim = onOnePool.claim(tx, "orders", "p-1", null);
          assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
          effect(tx, "orders", "p-1", 1);
          tx.rollback();
          onOnePool.recordFailure(tx, claim, "card declined");
          assertThat(inbox.admin().find("orders", "p-1").orElseThrow().attempts())
              .as("attempt %d counted", attempt)
              .isEqualTo(attempt);
          assertThat(tx.getAutoCommit()).as("left as found").isFalse();
        }
        assertThat(onOnePool.claim(tx, "orders", "p-1", null).outcome())
            .isEqualTo(ClaimOutcome.GAVE_UP);
        tx.rollback();
      }
    }
    assertThat(effects("p-1")).isZero();
  }

  @Test
  void a_connection_still_inside_a_transaction_is_refused_and_nothing_of_it_commits()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "orders", "p-2", null);
      effect(tx, "orders", "p-2", 1);
      assertThatThrownBy(() -> inbox.recordFailure(tx, claim, "forgot to roll back"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("still holds a transaction")
          .hasMessageContaining("roll it back first");
      tx.rollback();
    }
    assertThat(effects("p-2")).as("the caller's work was not committed").isZero();
    assertThat(inbox.admin().find("orders", "p-2")).as("nor its claim").isEmpty();
  }

  @Test
  void a_connection_in_auto_commit_mode_counts_and_stays_in_it() throws Exception {
    Inbox inbox = inbox();
    Claim claim;
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      claim = inbox.claim(tx, "orders", "p-3", null);
      tx.rollback();
      tx.setAutoCommit(true);
      inbox.recordFailure(tx, claim, "validation failed");
      assertThat(tx.getAutoCommit()).isTrue();
    }
    InboxRecord record = inbox.admin().find("orders", "p-3").orElseThrow();
    assertThat(record.state()).isEqualTo(RecordState.FAILED);
    assertThat(record.attempts()).isEqualTo(1);
  }

  /**
   * A connection in auto-commit mode inside an explicit transaction (a BEGIN the caller sent, as
   * plain-SQL code and some frameworks do) is refused too: switching it to auto-commit off and
   * committing would commit the caller's pending work.
   */
  @Test
  void an_auto_commit_connection_inside_an_explicit_transaction_is_refused_and_nothing_commits()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "orders", "p-4", null);
      tx.rollback();
      tx.setAutoCommit(true);
      try (Statement begin = tx.createStatement()) {
        begin.execute("BEGIN");
      }
      effect(tx, "orders", "p-4", 1);
      Throwable refused = null;
      try {
        inbox.recordFailure(tx, claim, "declined");
      } catch (IllegalStateException e) {
        refused = e;
      }
      try (Statement rollback = tx.createStatement()) {
        rollback.execute("ROLLBACK");
      }
      assertThat(effects("p-4"))
          .as("the caller's write, rolled back by the caller, was not committed by the count")
          .isZero();
      assertThat(refused)
          .as("refused: the connection still held the caller's transaction")
          .isInstanceOf(IllegalStateException.class);
    }
  }
}
