package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BringYourOwnTransactionTest extends InboxTestSupport {

  @Test
  void a_duplicate_leaves_the_callers_transaction_usable() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "orders", "o-1", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      effect(tx, "orders", "o-1", 5);
      inbox.complete(tx, claim, null);
      tx.commit();
    }
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      effect(tx, "orders", "unrelated-write-before", 1);
      try (Statement s = tx.createStatement()) {
        s.execute("SET LOCAL lock_timeout = '7s'");
      }
      Claim duplicate = inbox.claim(tx, "orders", "o-1", null);
      assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      // Answered from the first read, and still the caller's lock timeout afterwards.
      try (Statement s = tx.createStatement();
          ResultSet rs = s.executeQuery("SHOW lock_timeout")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("7s");
      }
      // The transaction is not aborted: the caller goes on and commits its other work.
      effect(tx, "orders", "unrelated-write-after", 1);
      tx.commit();
    }
    assertThat(effects("o-1")).isEqualTo(1);
    assertThat(effects("unrelated-write-before")).isEqualTo(1);
    assertThat(effects("unrelated-write-after")).isEqualTo(1);
  }

  @Test
  void a_lock_timeout_answers_in_progress_without_aborting_and_restores_the_callers_lock_timeout()
      throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(200)));
    try (HeldKey held = HeldKey.claimed(inbox, "orders", "o-2");
        Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      try (Statement s = tx.createStatement()) {
        s.execute("SET LOCAL lock_timeout = '7s'");
      }
      Claim claim = inbox.claim(tx, "orders", "o-2", null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
      try (Statement s = tx.createStatement();
          ResultSet rs = s.executeQuery("SHOW lock_timeout")) {
        rs.next();
        assertThat(rs.getString(1)).as("the caller's own setting survives").isEqualTo("7s");
      }
      effect(tx, "orders", "still-usable", 1);
      tx.commit();
    }
    assertThat(effects("still-usable")).isEqualTo(1);
  }

  /**
   * What {@code claimAtStart} did, a claim that begins its transaction, is now how {@code execute}
   * claims: once, a duplicate after, and IN_PROGRESS while another claimant holds the key past the
   * lock timeout.
   */
  @Test
  void execute_claims_once_answers_duplicates_and_times_out_as_in_progress() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(200)));
    assertThat(executeWithEffect(inbox, "orders", "o-3").outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(executeWithEffect(inbox, "orders", "o-3").outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    try (HeldKey held = HeldKey.reserved(inbox, "orders", "o-4")) {
      assertThat(executeWithEffect(inbox, "orders", "o-4").outcome())
          .as("held by another execute")
          .isEqualTo(ClaimOutcome.IN_PROGRESS);
    }
    try (HeldKey held = HeldKey.claimed(inbox, "orders", "o-5")) {
      assertThat(executeWithEffect(inbox, "orders", "o-5").outcome())
          .as("held by a consumer's batch")
          .isEqualTo(ClaimOutcome.IN_PROGRESS);
    }
    assertThat(effects("o-3")).isEqualTo(1);
    assertThat(effects("o-4")).isZero();
    assertThat(effects("o-5")).isZero();
  }

  @Test
  void a_rolled_back_caller_transaction_leaves_no_claim_and_record_failure_counts_it()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    Claim claim;
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      claim = inbox.claim(tx, "orders", "o-3", null);
      effect(tx, "orders", "o-3", 1);
      tx.rollback();
      assertThat(inbox.admin().find("orders", "o-3")).isEmpty();
      inbox.recordFailure(tx, claim, "validation failed");
    }
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(inbox.claim(tx, "orders", "o-3", null).outcome()).isEqualTo(ClaimOutcome.GAVE_UP);
      tx.rollback();
    }
    assertThat(effects()).isZero();
  }

  @Test
  void claim_refuses_a_connection_in_auto_commit_mode() throws Exception {
    Inbox inbox = inbox();
    try (Connection c = dataSource.getConnection()) {
      assertThatThrownBy(() -> inbox.claim(c, "s", "k", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("autoCommit=false");
    }
    assertThat(inboxRows()).isZero();
  }
}
