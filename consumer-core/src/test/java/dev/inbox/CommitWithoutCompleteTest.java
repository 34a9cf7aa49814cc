package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A caller's transaction that claims a key, writes its effect and commits without {@code
 * complete()} has still committed the effect: every later claim of the key must see a duplicate.
 */
class CommitWithoutCompleteTest extends InboxTestSupport {

  private void claimApplyAndCommitWithoutComplete(Inbox inbox, String key) throws Exception {
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "orders", key, null);
      assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
      effect(tx, "orders", key, 5);
      tx.commit(); // no complete()
    }
  }

  /** What the next delivery does: claim on its own transaction and apply only when NEW. */
  private ClaimOutcome deliverAgain(Inbox inbox, String key) throws Exception {
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "orders", key, null);
      if (claim.isNew()) {
        effect(tx, "orders", key, 5);
        inbox.complete(tx, claim, null);
      }
      tx.commit();
      return claim.outcome();
    }
  }

  @Test
  void a_claim_committed_without_complete_answers_duplicate_to_the_next_claim() throws Exception {
    Inbox inbox = inbox();
    claimApplyAndCommitWithoutComplete(inbox, "o-1");

    assertThat(deliverAgain(inbox, "o-1")).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("o-1")).as("effect rows of o-1").isEqualTo(1);
    assertThat(inboxRows()).isEqualTo(1);
  }

  @Test
  void every_other_way_in_answers_duplicate_too() throws Exception {
    Inbox inbox = inbox();
    claimApplyAndCommitWithoutComplete(inbox, "o-2");

    assertThat(inbox.admin().lookup("orders", "o-2", null).map(Claim::outcome))
        .contains(ClaimOutcome.DUPLICATE);
    assertThat(executeWithEffect(inbox, "orders", "o-2").outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(deliverWithEffect(inbox, "orders", "o-2", null)).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(inbox.leases().claim("orders", "o-2", null).outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Inbox joining = joining(tx);
      assertThat(executeWithEffect(joining, "orders", "o-2").outcome())
          .as("execute on a caller's transaction")
          .isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(deliverWithEffect(joining, "orders", "o-2", null))
          .as("a batch on a caller's transaction")
          .isEqualTo(ItemStatus.DUPLICATE);
      tx.commit();
    }
    assertThat(inbox.admin().release("orders", "o-2")).isEqualTo(ReleaseResult.NOT_RELEASABLE);
    assertThat(effects("o-2")).as("effect rows of o-2").isEqualTo(1);
  }

  @Test
  void such_a_key_is_kept_for_the_retention_and_then_purged_like_a_completed_one()
      throws Exception {
    Inbox inbox = inbox(s -> s.retention(Duration.ofHours(24)));
    claimApplyAndCommitWithoutComplete(inbox, "o-old");
    claimApplyAndCommitWithoutComplete(inbox, "o-legacy");
    claimApplyAndCommitWithoutComplete(inbox, "o-young");
    assertThat(inbox.admin().find("orders", "o-old").orElseThrow().state())
        .as("the claim wrote the record COMPLETED")
        .isEqualTo(RecordState.COMPLETED);
    sql(
        "UPDATE "
            + schema
            + ".inbox SET created_at = now() - interval '25 hours',"
            + " updated_at = now() - interval '25 hours',"
            + " completed_at = now() - interval '25 hours' WHERE key = 'o-old'");
    // Earlier versions wrote such a claim IN_PROGRESS without a lease; those rows age alike.
    sql(
        "UPDATE "
            + schema
            + ".inbox SET state = 'IN_PROGRESS', completed_at = NULL,"
            + " created_at = now() - interval '25 hours',"
            + " updated_at = now() - interval '25 hours' WHERE key = 'o-legacy'");

    assertThat(inbox.admin().purgeExpired()).as("rows purged").isEqualTo(2);
    assertThat(inbox.admin().find("orders", "o-old")).isEmpty();
    assertThat(inbox.admin().find("orders", "o-legacy")).isEmpty();
    assertThat(deliverAgain(inbox, "o-young")).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(inboxRows()).isEqualTo(1);
  }
}
