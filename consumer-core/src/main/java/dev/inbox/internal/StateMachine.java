package dev.inbox.internal;

import static dev.inbox.RecordState.COMPLETED;
import static dev.inbox.RecordState.FAILED;
import static dev.inbox.RecordState.IN_PROGRESS;
import static dev.inbox.internal.StateMachine.Condition.BELOW_MAX_ATTEMPTS;
import static dev.inbox.internal.StateMachine.Condition.COMPLETED_BEFORE_RETENTION;
import static dev.inbox.internal.StateMachine.Condition.LEASE_EXPIRED;
import static dev.inbox.internal.StateMachine.Condition.LEASE_HELD;
import static dev.inbox.internal.StateMachine.Condition.NO_LEASE;
import static dev.inbox.internal.StateMachine.Condition.WRITTEN_BEFORE_RETENTION;
import static dev.inbox.internal.StateMachine.Condition.WRITTEN_NOW;

import dev.inbox.ClaimOutcome;
import dev.inbox.IllegalStateTransitionException;
import dev.inbox.InboxException;
import dev.inbox.InboxRecord;
import dev.inbox.LeaseLostException;
import dev.inbox.RecordState;
import dev.inbox.ReleaseResult;
import java.util.List;
import java.util.Optional;

/**
 * The inbox's state machine, whole: the states of a key's record, every move the SQL makes between
 * them with the guard that allows it, the give-up rule, and what a claim answers for a row.
 *
 * <p>A key has no record ({@link #NO_RECORD}) or one row in a {@link RecordState}. Every write in
 * {@link Statements} takes its guard from a {@link Transition}, so a row moves only as this table
 * says; a write that changed no row is explained here too. {@code StateMachineSqlTest} runs every
 * statement on a row in every state and checks that it moved exactly the rows the table allows.
 */
public final class StateMachine {
  /** The state of a key without a row: never claimed, rolled back, or purged. */
  static final RecordState NO_RECORD = null;

  /**
   * The guard of a transition from {@link #NO_RECORD}, which is an INSERT: the primary key, as the
   * conflict target. No WHERE can test a row that is not there; a row that is makes the INSERT
   * conflict instead, which its statement turns into DO NOTHING, into DO UPDATE under another
   * transition's guard, or into a unique violation (SQLState 23505).
   */
  static final String PRIMARY_KEY = "(scope, key)";

  /**
   * Whether the row's lease runs on, by the database's clock: the complement of {@link
   * Condition#LEASE_EXPIRED}, and null for a row without a lease.
   */
  static final String LEASE_LIVE = "r.locked_until >= now()";

  private StateMachine() {}

  /**
   * A condition on the key's row {@code r}, besides its state, that a transition needs. A {@code ?}
   * is bound by the statement.
   */
  enum Condition {
    /** The lease's end has passed on the database's clock: its owner is presumed dead. */
    LEASE_EXPIRED("r.locked_until < now()"),
    /**
     * The lease runs on by the database's clock ({@link StateMachine#LEASE_LIVE}): its owner may be
     * performing its effect right now. Only an operator's forced move takes such a key.
     */
    LEASE_HELD(LEASE_LIVE),
    /**
     * IN_PROGRESS without a lease: a caller's transaction that committed its claim without {@code
     * complete()}, and with it the handler's effect, so the key counts as completed. Claims on a
     * caller's transaction are written COMPLETED now; such rows come from earlier versions.
     */
    NO_LEASE("r.locked_until IS NULL"),
    /** The give-up rule ({@link #gaveUp}) negated; bound to maxAttempts. */
    BELOW_MAX_ATTEMPTS("r.attempts < ?"),
    /**
     * The row was last written at this transaction's start ({@code now()} stands still within a
     * transaction): the row of a claim made in this transaction, not one that an earlier
     * transaction completed.
     */
    WRITTEN_NOW("r.updated_at = now()"),
    /** Completed longer ago than the retention, bound as an interval. */
    COMPLETED_BEFORE_RETENTION("r.completed_at < now() - ?::interval"),
    /** Last written longer ago than the retention, bound as an interval. */
    WRITTEN_BEFORE_RETENTION("r.updated_at < now() - ?::interval");

    private final String sql;

    Condition(String sql) {
      this.sql = sql;
    }

    String sql() {
      return sql;
    }

    boolean takesParameter() {
      return sql.indexOf('?') >= 0;
    }
  }

  /**
   * Every move a statement makes, from a state to a state, and the conditions it needs. A statement
   * that performs several (the claim's upsert) tests the guards of all of them.
   */
  enum Transition {
    /** A new key claimed: the record is written with its lease (leased mode) or without one. */
    CLAIM(NO_RECORD, IN_PROGRESS),
    /**
     * A new key claimed by a transaction whose commit is the work's: the inbox's own, which commits
     * only when its handler succeeded, or a caller's, whose commit is the work done, completed or
     * not. Written in its final state, since nobody can see the row before the commit.
     */
    CLAIM_COMPLETED(NO_RECORD, COMPLETED),
    /** A failed key claimed again, counting an attempt. */
    RETRY(FAILED, IN_PROGRESS, BELOW_MAX_ATTEMPTS),
    /** {@link #RETRY} by a transaction that commits only when its handler succeeded. */
    RETRY_COMPLETED(FAILED, COMPLETED, BELOW_MAX_ATTEMPTS),
    /**
     * An expired lease taken over, with a new fencing token, counting an attempt: a message that
     * kills its worker every time gives up like one that fails.
     */
    TAKE_OVER(IN_PROGRESS, IN_PROGRESS, LEASE_EXPIRED, BELOW_MAX_ATTEMPTS),
    /** {@link #TAKE_OVER} by a transaction that commits only when its handler succeeded. */
    TAKE_OVER_COMPLETED(IN_PROGRESS, COMPLETED, LEASE_EXPIRED, BELOW_MAX_ATTEMPTS),
    /** A lease extended by its owner (the statement checks the fencing token). */
    RENEW(IN_PROGRESS, IN_PROGRESS),
    /** The handler's work done: by a lease's owner, or in the claim's own transaction. */
    COMPLETE(IN_PROGRESS, COMPLETED),
    /**
     * The handler's result added to the row that its claim wrote COMPLETED in this transaction (the
     * inbox's own, or the caller's), so that a stale claim never replaces the answer of a record
     * that another transaction completed.
     */
    STORE_RESULT(COMPLETED, COMPLETED, WRITTEN_NOW),
    /**
     * A reservation's completion: its key had no record, and the record is inserted whole and
     * COMPLETED. A record another claimant wrote meanwhile makes it a unique violation.
     */
    COMPLETE_RESERVATION(NO_RECORD, COMPLETED),
    /** The handler threw, or a lease's owner gave up. */
    FAIL(IN_PROGRESS, FAILED),
    /**
     * A failed attempt counted after its claim rolled back, leaving no record: the record is
     * written FAILED with the attempt's fingerprint.
     */
    COUNT_FAILURE(NO_RECORD, FAILED),
    /** A failed attempt counted after its claim of a failed key rolled back. */
    COUNT_FAILURE_AGAIN(FAILED, FAILED),
    /** A failed attempt counted after its take-over of an expired lease rolled back. */
    COUNT_FAILURE_OF_EXPIRED_LEASE(IN_PROGRESS, FAILED, LEASE_EXPIRED),
    /** An operator released a failed key (one that gave up, too), resetting its attempts. */
    RELEASE(FAILED, FAILED),
    /**
     * An operator released a key whose lease expired, such as one that gave up after its leases
     * expired maxAttempts times, resetting its attempts.
     */
    RELEASE_EXPIRED_LEASE(IN_PROGRESS, FAILED, LEASE_EXPIRED),
    /**
     * An operator forced the release of a key whose lease runs on: its owner is fenced off (the
     * token grows), though it may still be performing its effect when the next claim runs it again.
     */
    RELEASE_LIVE_LEASE(IN_PROGRESS, FAILED, LEASE_HELD),
    /**
     * An operator settled a failed key (one that gave up, too) with a result of their own, for an
     * external effect they reconciled: the key answers DUPLICATE with that result from now on.
     */
    SETTLE(FAILED, COMPLETED),
    /** {@link #SETTLE} of a key whose lease expired. */
    SETTLE_EXPIRED_LEASE(IN_PROGRESS, COMPLETED, LEASE_EXPIRED),
    /**
     * {@link #SETTLE} forced on a key whose lease runs on; its owner is fenced off and can no
     * longer record a result of its own.
     */
    SETTLE_LIVE_LEASE(IN_PROGRESS, COMPLETED, LEASE_HELD),
    /**
     * {@link #SETTLE} of a key without a record (never claimed, rolled back, or purged): the record
     * is inserted COMPLETED with the operator's result.
     */
    SETTLE_NEW(NO_RECORD, COMPLETED),
    /** A completed record past the retention deleted. */
    PURGE(COMPLETED, NO_RECORD, COMPLETED_BEFORE_RETENTION),
    /** A claim committed without {@code complete()} deleted once past the retention. */
    PURGE_COMMITTED_WITHOUT_COMPLETE(IN_PROGRESS, NO_RECORD, NO_LEASE, WRITTEN_BEFORE_RETENTION);

    private final RecordState from;
    private final RecordState to;
    private final List<Condition> conditions;

    Transition(RecordState from, RecordState to, Condition... conditions) {
      this.from = from;
      this.to = to;
      this.conditions = List.of(conditions);
    }

    /** The state it moves from; {@link #NO_RECORD} for an INSERT. */
    RecordState from() {
      return from;
    }

    /** The state it moves to; {@link #NO_RECORD} for a DELETE. */
    RecordState to() {
      return to;
    }

    List<Condition> conditions() {
      return conditions;
    }

    /**
     * The SQL that lets it happen only where the table allows it: for a move from a row, the WHERE
     * condition over that row {@code r}, with a {@code ?} for each bound condition in the order of
     * {@link #conditions}; for a move from no record, {@link #PRIMARY_KEY}.
     */
    String guard() {
      return from == NO_RECORD ? PRIMARY_KEY : guard(false);
    }

    /**
     * {@link #guard} without the conditions that take a parameter: the row's state and lease, which
     * a statement can test twice without binding anything twice.
     */
    String stateGuard() {
      return guard(true);
    }

    private String guard(boolean withoutParameters) {
      if (from == NO_RECORD) {
        throw new IllegalStateException(this + " moves from no record, so it has no row to test");
      }
      StringBuilder guard = new StringBuilder("r.state = '").append(from).append('\'');
      for (Condition condition : conditions) {
        if (!(withoutParameters && condition.takesParameter())) {
          guard.append(" AND ").append(condition.sql());
        }
      }
      return guard.toString();
    }

    /** The state it writes, as a SQL literal. */
    String toLiteral() {
      if (to == NO_RECORD) {
        throw new IllegalStateException(this + " deletes the row, so it writes no state");
      }
      return "'" + to + "'";
    }

    @Override
    public String toString() {
      return name() + " (" + describe(from) + " to " + describe(to) + ")";
    }
  }

  /** The guard of a statement that makes whichever of {@code transitions} the row allows. */
  static String anyOf(Transition... transitions) {
    StringBuilder guard = new StringBuilder("(");
    for (Transition transition : transitions) {
      guard.append(guard.length() == 1 ? "(" : " OR (").append(transition.guard()).append(')');
    }
    return guard.append(')').toString();
  }

  /**
   * The give-up rule: a key that has used up its attempts is not claimed again. Public for the one
   * adjudication ({@link dev.inbox.Disposition}); the SQL guards use its negation.
   */
  public static boolean gaveUp(int attempts, int maxAttempts) {
    return attempts >= maxAttempts;
  }

  /**
   * What a claim answers for the key's row, the row's state first: {@link ClaimOutcome#NEW} where a
   * claim may take the key (no record; a failed key or an expired lease not yet given up), so
   * exactly where {@link Transition#CLAIM}, {@link Transition#RETRY} or {@link
   * Transition#TAKE_OVER} is allowed. A recorded fingerprint that mismatches the presented one
   * answers {@link ClaimOutcome#MISMATCH} whatever the state.
   *
   * @param state the row's state, or {@link #NO_RECORD}
   * @param leaseLive whether the row's lease runs on ({@link #LEASE_LIVE}); null without a lease
   */
  static ClaimOutcome classify(
      RecordState state,
      int attempts,
      boolean fingerprintMismatch,
      Boolean leaseLive,
      int maxAttempts) {
    if (state == NO_RECORD) {
      return ClaimOutcome.NEW;
    }
    if (fingerprintMismatch) {
      return ClaimOutcome.MISMATCH;
    }
    switch (state) {
      case COMPLETED:
        return ClaimOutcome.DUPLICATE;
      case IN_PROGRESS:
        if (leaseLive == null) {
          // Only a caller's transaction that committed its claim without complete() leaves this
          // committed; it committed the effect with it.
          return ClaimOutcome.DUPLICATE;
        }
        if (leaseLive) {
          return ClaimOutcome.IN_PROGRESS;
        }
        // Every expired lease was an attempt that never finished: past maxAttempts, give up.
        return gaveUp(attempts, maxAttempts) ? ClaimOutcome.GAVE_UP : ClaimOutcome.NEW;
      case FAILED:
        return gaveUp(attempts, maxAttempts) ? ClaimOutcome.GAVE_UP : ClaimOutcome.NEW;
      default:
        throw new IllegalStateException("unknown state " + state + ", which indicates a bug");
    }
  }

  /** True when some transition moves a record from {@code from} to {@code to}. */
  static boolean isLegal(RecordState from, RecordState to) {
    for (Transition transition : Transition.values()) {
      if (transition.from == from && transition.to == to) {
        return true;
      }
    }
    return false;
  }

  /** Throws unless some transition moves a record from {@code from} to {@code to}. */
  static void check(String scope, String key, RecordState from, RecordState to) {
    if (!isLegal(from, to)) {
      throw new IllegalStateTransitionException(scope, key, from, to);
    }
  }

  /**
   * Why a lease owner's {@code transition}, guarded by its fencing token, changed no row, from the
   * key's record as it is now. The token still there means nobody took over, so the record had
   * already left the transition's state: {@link IllegalStateTransitionException}. Another token, or
   * no record, means another owner took the lease over: {@link LeaseLostException}.
   */
  static InboxException leaseRefused(
      Transition transition,
      String scope,
      String key,
      long fencingToken,
      Optional<InboxRecord> found) {
    if (found.isPresent() && found.get().fencingToken() == fencingToken) {
      return new IllegalStateTransitionException(scope, key, found.get().state(), transition.to());
    }
    String description =
        found
            .map(
                r ->
                    "now "
                        + r.state()
                        + " with fencing token "
                        + r.fencingToken()
                        + ", owner "
                        + r.leaseOwner())
            .orElse("the record no longer exists");
    return new LeaseLostException(scope, key, fencingToken, description);
  }

  /**
   * What a release answers when it changed no row: {@link Transition#RELEASE} and {@link
   * Transition#RELEASE_EXPIRED_LEASE} move only a failed key or an expired lease, so a record in
   * any other state is not releasable.
   */
  static ReleaseResult notReleased(RecordState found) {
    return found == NO_RECORD ? ReleaseResult.NOT_FOUND : ReleaseResult.NOT_RELEASABLE;
  }

  /**
   * A write to a key this transaction claimed that changed {@code changed} rows instead of one: the
   * claim left the row where the transition's guard holds, so this is a bug.
   */
  static IllegalStateException unexpectedRowCount(
      Transition transition, String scope, String key, int changed) {
    return unexpectedRowCount(transition, scope, "key '" + key + "'", 1, changed);
  }

  /** {@link #unexpectedRowCount(Transition, String, String, int)} for many keys at once. */
  static IllegalStateException unexpectedRowCount(
      Transition transition, String scope, List<String> keys, int changed) {
    return unexpectedRowCount(transition, scope, keys.size() + " keys", keys.size(), changed);
  }

  private static IllegalStateException unexpectedRowCount(
      Transition transition, String scope, String what, int expected, int changed) {
    return new IllegalStateException(
        transition
            + " of claimed "
            + what
            + " in scope '"
            + scope
            + "' changed "
            + changed
            + " rows instead of "
            + expected
            + ", though the claim left them where "
            + transition.guard()
            + "; this indicates a bug");
  }

  private static String describe(RecordState state) {
    return state == NO_RECORD ? "no record" : state.name();
  }
}
