package dev.inbox.internal;

import dev.inbox.IllegalStateTransitionException;
import dev.inbox.RecordState;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The legal state transitions, as one explicit table. SQL statements take their {@code WHERE state
 * IN (...)} guards from it, and a conditional UPDATE that changed no row is explained against it.
 */
public enum Transitions {
  /** No record to IN_PROGRESS: the first claim. */
  CLAIM(null, RecordState.IN_PROGRESS),
  /** FAILED to IN_PROGRESS: a retry below maxAttempts. */
  RETRY(RecordState.FAILED, RecordState.IN_PROGRESS),
  /** IN_PROGRESS to IN_PROGRESS: an expired lease taken over, or a lease renewed. */
  TAKE_OVER(RecordState.IN_PROGRESS, RecordState.IN_PROGRESS),
  /** IN_PROGRESS to COMPLETED: the handler's work committed. */
  COMPLETE(RecordState.IN_PROGRESS, RecordState.COMPLETED),
  /** IN_PROGRESS to FAILED: the handler threw or a leased owner gave up. */
  FAIL(RecordState.IN_PROGRESS, RecordState.FAILED),
  /** FAILED to FAILED: an operator released the key, resetting its attempts. */
  RELEASE(RecordState.FAILED, RecordState.FAILED),
  /**
   * IN_PROGRESS to FAILED: an operator released a key whose lease expired, such as one that gave up
   * after its leases expired maxAttempts times, resetting its attempts.
   */
  RELEASE_EXPIRED_LEASE(RecordState.IN_PROGRESS, RecordState.FAILED);

  private static final Map<RecordState, Set<RecordState>> LEGAL = legalTable();

  private final RecordState from;
  private final RecordState to;

  Transitions(RecordState from, RecordState to) {
    this.from = from;
    this.to = to;
  }

  public RecordState from() {
    return from;
  }

  public RecordState to() {
    return to;
  }

  /** True when some transition leads from {@code from} (null: no record) to {@code to}. */
  public static boolean isLegal(RecordState from, RecordState to) {
    if (from == null) {
      return to == CLAIM.to;
    }
    return LEGAL.get(from).contains(to);
  }

  /** Throws unless the table has {@code from -> to}. */
  public static void check(String scope, String key, RecordState from, RecordState to) {
    if (!isLegal(from, to)) {
      throw new IllegalStateTransitionException(scope, key, from, to);
    }
  }

  private static Map<RecordState, Set<RecordState>> legalTable() {
    Map<RecordState, Set<RecordState>> table = new java.util.EnumMap<>(RecordState.class);
    for (RecordState state : RecordState.values()) {
      table.put(state, EnumSet.noneOf(RecordState.class));
    }
    for (Transitions t : values()) {
      if (t.from != null) {
        table.get(t.from).add(t.to);
      }
    }
    return table;
  }
}
