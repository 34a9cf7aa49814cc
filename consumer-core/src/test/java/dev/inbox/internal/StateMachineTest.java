package dev.inbox.internal;

import static dev.inbox.RecordState.COMPLETED;
import static dev.inbox.RecordState.FAILED;
import static dev.inbox.RecordState.IN_PROGRESS;
import static dev.inbox.internal.StateMachine.NO_RECORD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.ClaimOutcome;
import dev.inbox.IllegalStateTransitionException;
import dev.inbox.InboxRecord;
import dev.inbox.LeaseLostException;
import dev.inbox.ReleaseResult;
import dev.inbox.internal.StateMachine.Transition;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The table as a reader checks it; {@link StateMachineSqlTest} checks the SQL against it. */
class StateMachineTest {

  @Test
  void the_transition_table_allows_exactly_the_moves_the_sql_makes() {
    assertThat(StateMachine.isLegal(NO_RECORD, IN_PROGRESS)).isTrue();
    assertThat(StateMachine.isLegal(NO_RECORD, COMPLETED))
        .as("a claim written straight to COMPLETED, and a reservation's completion")
        .isTrue();
    assertThat(StateMachine.isLegal(NO_RECORD, FAILED))
        .as("a failure counted after its claim rolled back")
        .isTrue();
    assertThat(StateMachine.isLegal(IN_PROGRESS, COMPLETED)).isTrue();
    assertThat(StateMachine.isLegal(IN_PROGRESS, FAILED)).isTrue();
    assertThat(StateMachine.isLegal(IN_PROGRESS, IN_PROGRESS)).as("take-over, renew").isTrue();
    assertThat(StateMachine.isLegal(IN_PROGRESS, NO_RECORD))
        .as("a claim committed without complete() purged")
        .isTrue();
    assertThat(StateMachine.isLegal(FAILED, IN_PROGRESS)).isTrue();
    assertThat(StateMachine.isLegal(FAILED, COMPLETED))
        .as("a failed key retried straight to COMPLETED")
        .isTrue();
    assertThat(StateMachine.isLegal(FAILED, FAILED)).as("release, a failure counted").isTrue();
    assertThat(StateMachine.isLegal(FAILED, NO_RECORD))
        .as("a failed key is never purged")
        .isFalse();
    assertThat(StateMachine.isLegal(COMPLETED, COMPLETED)).as("a result stored").isTrue();
    assertThat(StateMachine.isLegal(COMPLETED, NO_RECORD)).as("purge").isTrue();
    assertThat(StateMachine.isLegal(COMPLETED, FAILED)).isFalse();
    assertThat(StateMachine.isLegal(COMPLETED, IN_PROGRESS)).isFalse();
    assertThat(StateMachine.isLegal(NO_RECORD, NO_RECORD)).isFalse();
    assertThatThrownBy(() -> StateMachine.check("s", "k-9", COMPLETED, FAILED))
        .isInstanceOf(IllegalStateTransitionException.class)
        .hasMessage("key 'k-9' in scope 's' cannot move from COMPLETED to FAILED");
  }

  @Test
  void the_guards_read_as_sql_over_the_row() {
    assertThat(Transition.RETRY.guard()).isEqualTo("r.state = 'FAILED' AND r.attempts < ?");
    assertThat(Transition.TAKE_OVER.guard())
        .isEqualTo("r.state = 'IN_PROGRESS' AND r.locked_until < now() AND r.attempts < ?");
    assertThat(Transition.PURGE.stateGuard()).isEqualTo("r.state = 'COMPLETED'");
    assertThat(StateMachine.anyOf(Transition.RELEASE, Transition.RELEASE_EXPIRED_LEASE))
        .isEqualTo(
            "((r.state = 'FAILED') OR (r.state = 'IN_PROGRESS' AND r.locked_until < now()))");
    assertThat(Transition.CLAIM.guard()).isEqualTo("(scope, key)");
  }

  @Test
  void a_row_is_answered_by_its_state_lease_attempts_and_fingerprint() {
    int max = 3;
    assertThat(StateMachine.classify(NO_RECORD, 0, false, null, max)).isEqualTo(ClaimOutcome.NEW);
    assertThat(StateMachine.classify(COMPLETED, 1, false, null, max))
        .isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(StateMachine.classify(COMPLETED, 1, true, null, max))
        .as("a mismatch whatever the state")
        .isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(StateMachine.classify(IN_PROGRESS, 1, false, null, max))
        .as("a claim committed without complete() committed its effect")
        .isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(StateMachine.classify(IN_PROGRESS, 1, false, true, max))
        .isEqualTo(ClaimOutcome.IN_PROGRESS);
    assertThat(StateMachine.classify(IN_PROGRESS, 2, false, false, max))
        .isEqualTo(ClaimOutcome.NEW);
    assertThat(StateMachine.classify(IN_PROGRESS, 3, false, false, max))
        .isEqualTo(ClaimOutcome.GAVE_UP);
    assertThat(StateMachine.classify(FAILED, 2, false, null, max)).isEqualTo(ClaimOutcome.NEW);
    assertThat(StateMachine.classify(FAILED, 3, false, null, max)).isEqualTo(ClaimOutcome.GAVE_UP);
    assertThat(StateMachine.classify(FAILED, 3, true, null, max)).isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(StateMachine.gaveUp(2, 3)).isFalse();
    assertThat(StateMachine.gaveUp(3, 3)).isTrue();
  }

  @Test
  void a_write_that_changed_no_row_is_explained_by_the_record_it_found() {
    InboxRecord completedByThisOwner = record(COMPLETED, 4, null);
    assertThat(
            StateMachine.leaseRefused(
                Transition.COMPLETE, "s", "k", 4, Optional.of(completedByThisOwner)))
        .isInstanceOf(IllegalStateTransitionException.class)
        .hasMessage("key 'k' in scope 's' cannot move from COMPLETED to COMPLETED");
    assertThat(
            StateMachine.leaseRefused(
                Transition.FAIL, "s", "k", 4, Optional.of(record(IN_PROGRESS, 5, "owner-b"))))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("now IN_PROGRESS with fencing token 5, owner owner-b");
    assertThat(StateMachine.leaseRefused(Transition.RENEW, "s", "k", 4, Optional.empty()))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("the record no longer exists");
    assertThat(StateMachine.notReleased(NO_RECORD)).isEqualTo(ReleaseResult.NOT_FOUND);
    assertThat(StateMachine.notReleased(COMPLETED)).isEqualTo(ReleaseResult.NOT_RELEASABLE);
    assertThat(StateMachine.unexpectedRowCount(Transition.COMPLETE, "s", "k", 0))
        .hasMessage(
            "COMPLETE (IN_PROGRESS to COMPLETED) of claimed key 'k' in scope 's' changed 0 rows"
                + " instead of 1, though the claim left them where r.state = 'IN_PROGRESS';"
                + " this indicates a bug");
  }

  private static InboxRecord record(
      dev.inbox.RecordState state, long fencingToken, String leaseOwner) {
    return new InboxRecord(
        "s", "k", null, state, 1, leaseOwner, fencingToken, null, null, null, null, null, null);
  }
}
