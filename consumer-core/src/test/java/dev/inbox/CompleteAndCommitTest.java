package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** completeAndCommit commits the claim, the effects and the result together, or nothing. */
class CompleteAndCommitTest extends InboxTestSupport {
  private final StoredResult created =
      StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));

  @Test
  void commits_the_effect_and_the_stored_result_and_leaves_the_connection_usable()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Claim claim = claimAtStartAndApply(inbox, tx, "k");
      inbox.completeAndCommit(tx, claim, created);

      // Seen from other connections: committed, not merely sent.
      assertThat(effects("k")).isEqualTo(1);
      InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
      assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(row.result().body()).contains(created.body().orElseThrow());

      // The same connection begins its next transaction normally, and rolls it back.
      Claim next = inbox.claimAtStart(tx, "s", "k2", null);
      assertThat(next.isNew()).isTrue();
      effect(tx, "s", "k2", 5);
      tx.rollback();
    }
    assertThat(effects("k2")).isZero();
    assertThat(inbox.admin().find("s", "k2")).isEmpty();
  }

  @Test
  void commits_nothing_when_the_claim_was_not_this_transactions_to_complete() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Claim claim = claimAtStartAndApply(inbox, tx, "k");
      // A claim with another fencing token matches no row: a caller's or the inbox's bug.
      Claim stale =
          new Claim(
              claim.scope(),
              claim.key(),
              ClaimOutcome.NEW,
              claim.attempts(),
              claim.fencingToken() + 1,
              null,
              null,
              null);
      assertThatThrownBy(() -> inbox.completeAndCommit(tx, stale, created))
          .isInstanceOf(InboxDatabaseException.class)
          .hasStackTraceContaining("changed 0 rows, so nothing was committed");
      tx.rollback();
    }
    assertThat(effects("k")).isZero();
    assertThat(inbox.admin().find("s", "k")).isEmpty();
  }

  @Test
  void a_claim_at_the_start_is_completed_by_a_hot_update_that_adds_no_index_entries()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      Claim claim = claimAtStartAndApply(inbox, tx, "k");
      inbox.complete(tx, claim, created);
      // This transaction's own counters: one update of the inbox, and it was heap-only.
      try (Statement s = tx.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables"
                      + " WHERE schemaname = '"
                      + schema
                      + "' AND relname = 'inbox'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).as("updates").isEqualTo(1);
        assertThat(rs.getLong(2)).as("heap-only updates").isEqualTo(1);
      }
      tx.commit();
    }
    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void a_stale_claim_never_overwrites_a_row_that_an_earlier_transaction_completed()
      throws Exception {
    Inbox inbox = inbox();
    Claim first;
    try (Connection tx = dataSource.getConnection()) {
      first = claimAtStartAndApply(inbox, tx, "k");
      inbox.completeAndCommit(tx, first, created);
    }
    // The same claim again (same fencing token) in a later transaction: the row is COMPLETED, as
    // a row this transaction had just inserted would be, but it is not this transaction's row.
    StoredResult other = StoredResult.of(500, "overwritten".getBytes(StandardCharsets.UTF_8));
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      effect(tx, "s", "k", 100);
      assertThatThrownBy(() -> inbox.completeAndCommit(tx, first, other))
          .isInstanceOf(InboxDatabaseException.class)
          .hasStackTraceContaining("changed 0 rows, so nothing was committed");
      tx.rollback();
    }
    assertThat(effects("k")).isEqualTo(1);
    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.result().status()).isEqualTo(201);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
  }

  /**
   * Begins a transaction on {@code tx}, claims {@code key} as its first statement and applies it.
   */
  private Claim claimAtStartAndApply(Inbox inbox, Connection tx, String key) throws Exception {
    tx.setAutoCommit(false);
    Claim claim = inbox.claimAtStart(tx, "s", key, null);
    assertThat(claim.isNew()).isTrue();
    effect(tx, "s", key, 100);
    return claim;
  }
}
