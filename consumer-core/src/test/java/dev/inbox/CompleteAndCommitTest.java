package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
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
      tx.setAutoCommit(false);
      Claim claim = inbox.claimAtStart(tx, "s", "k", null);
      effect(tx, "s", "k", 100);
      inbox.completeAndCommit(tx, claim, created);

      // Seen from other connections: committed, not merely sent.
      assertThat(effects("k")).isEqualTo(1);
      InboxRecord row = inbox.find("s", "k").orElseThrow();
      assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(row.result().body()).contains(created.body().orElseThrow());

      // The same connection begins its next transaction normally, and rolls it back.
      Claim next = inbox.claimAtStart(tx, "s", "k2", null);
      assertThat(next.isNew()).isTrue();
      effect(tx, "s", "k2", 5);
      tx.rollback();
    }
    assertThat(effects("k2")).isZero();
    assertThat(inbox.find("s", "k2")).isEmpty();
  }

  @Test
  void commits_nothing_when_the_claim_was_not_this_transactions_to_complete() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claimAtStart(tx, "s", "k", null);
      effect(tx, "s", "k", 100);
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
    assertThat(inbox.find("s", "k")).isEmpty();
  }
}
