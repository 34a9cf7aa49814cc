package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.Claim;
import dev.inbox.InboxRecord;
import dev.inbox.InboxTable;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * {@link Statements#completeAndCommit} commits the claim, the effects and the result together, or
 * nothing; {@link Statements#completeInTransaction} completes a row that its own transaction wrote
 * COMPLETED by a HOT update, and its {@code xmin} guard keeps a stale claim off a row that an
 * earlier transaction completed.
 *
 * <p>No public method reaches these statements since the engine chooses its strategies itself
 * ({@code claimAtStart} and {@code completeAndCommit} left the API): {@code execute} records a new
 * key with {@link Statements#insertCompletedAndCommit} and completes a recorded one with {@link
 * Statements#storeResult}, and a claim on a caller's transaction is written IN_PROGRESS, so {@code
 * complete} never takes the {@code xmin} branch. These tests keep the statements honest while they
 * exist.
 */
class CompleteAndCommitSqlTest extends EngineTestSupport {
  private final StoredResult created =
      StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));

  /** What {@code completeAndCommit} did: the statement, then the driver's end of the commit. */
  private void completeAndCommit(Connection transaction, Claim claim, StoredResult result)
      throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(sql.completeAndCommit)) {
      PostgresInbox.bindCompletion(
          transaction, ps, claim.scope(), claim.key(), claim.fencingToken(), result);
      ps.execute();
    }
    transaction.commit();
  }

  private int completeInTransaction(Connection transaction, Claim claim, StoredResult result)
      throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(sql.completeInTransaction)) {
      PostgresInbox.bindCompletion(
          transaction, ps, claim.scope(), claim.key(), claim.fencingToken(), result);
      return ps.executeUpdate();
    }
  }

  private Claim claimAtStartAndApply(Connection transaction, String key) throws SQLException {
    Claim claim = claimAtStart(transaction, key);
    assertThat(claim.isNew()).isTrue();
    effects.apply(transaction, key, 100);
    return claim;
  }

  @Test
  void commits_the_effect_and_the_stored_result_and_leaves_the_connection_usable()
      throws Exception {
    try (Connection tx = begin()) {
      Claim claim = claimAtStartAndApply(tx, "k");
      completeAndCommit(tx, claim, created);

      // Seen from other connections: committed, not merely sent.
      assertThat(effects.count()).isEqualTo(1);
      InboxRecord row = record("k");
      assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(row.result().body()).contains(created.body().orElseThrow());

      // The same connection begins its next transaction normally, and rolls it back.
      Claim next = claimAtStart(tx, "k2");
      assertThat(next.isNew()).isTrue();
      effects.apply(tx, "k2", 5);
      tx.rollback();
    }
    assertThat(effects.count()).as("k's effect only").isEqualTo(1);
    assertThat(recorded("k2")).isFalse();
  }

  @Test
  void commits_nothing_when_the_claim_was_not_this_transactions_to_complete() throws Exception {
    try (Connection tx = begin()) {
      Claim claim = claimAtStartAndApply(tx, "k");
      // A claim with another fencing token matches no row: a caller's or the inbox's bug.
      Claim stale = InboxTable.withAnotherFencingToken(claim);
      assertThatThrownBy(() -> completeAndCommit(tx, stale, created))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("changed 0 rows, so nothing was committed");
      tx.rollback();
    }
    assertThat(effects.count()).isZero();
    assertThat(recorded("k")).isFalse();
  }

  @Test
  void a_claim_at_the_start_is_completed_by_a_hot_update_that_adds_no_index_entries()
      throws Exception {
    try (Connection tx = begin()) {
      Claim claim = claimAtStartAndApply(tx, "k");
      assertThat(completeInTransaction(tx, claim, created)).isEqualTo(1);
      // This transaction's own counters: one update of the inbox, and it was heap-only.
      InboxTable.Counters counters = InboxTable.counters(tx, schema);
      assertThat(counters.updates()).as("updates").isEqualTo(1);
      assertThat(counters.heapOnlyUpdates()).as("heap-only updates").isEqualTo(1);
      tx.commit();
    }
    InboxRecord row = record("k");
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void a_stale_claim_never_overwrites_a_row_that_an_earlier_transaction_completed()
      throws Exception {
    Claim first;
    try (Connection tx = begin()) {
      first = claimAtStartAndApply(tx, "k");
      completeAndCommit(tx, first, created);
    }
    // The same claim again (same fencing token) in a later transaction: the row is COMPLETED, as
    // a row this transaction had just inserted would be, but it is not this transaction's row.
    StoredResult other = StoredResult.of(500, "overwritten".getBytes(StandardCharsets.UTF_8));
    try (Connection tx = begin()) {
      effects.apply(tx, "k", 100);
      assertThatThrownBy(() -> completeAndCommit(tx, first, other))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("changed 0 rows, so nothing was committed");
      tx.rollback();
    }
    assertThat(effects.count()).isEqualTo(1);
    InboxRecord row = record("k");
    assertThat(row.result().status()).isEqualTo(201);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
  }
}
