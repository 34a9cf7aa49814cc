package dev.inbox.internal;

import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchHandler;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.InboxSettings;
import dev.inbox.ItemResult;
import dev.inbox.ItemStatus;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One call of {@code executeBatch}.
 *
 * <p>Algorithm: an optimistic pass claims every distinct key in one statement and runs the handlers
 * with no savepoint, which costs no round trip beyond the handlers' own. If a handler throws, that
 * pass rolls back and a careful pass runs again with a savepoint around each handler, so that the
 * failing item is rolled back and counted while the others commit. Under {@link
 * BatchFailurePolicy#STOP} the careful pass claims only up to the failing item, so that no later
 * item of the partition takes effect before it. Re-running a handler is safe here because its only
 * effects are writes that were rolled back.
 *
 * <p>With a {@linkplain BatchHandler#setBased set-based} handler the optimistic pass makes one call
 * for all new items; since a failure then names no item, the careful pass runs over the whole
 * batch, one item per call.
 *
 * <p>Joining the caller's transaction, each pass runs under a savepoint of it instead of a
 * transaction of its own: what a pass would roll back is rolled back to that savepoint, and a
 * finished pass releases it instead of committing.
 *
 * <p>A handler failure whose rollback finds the connection broken (a handler that threw in the
 * middle of a statement leaves it half-sent) has lost the pass's transaction with the connection:
 * the item's attempt is counted in a transaction of its own, and the careful pass runs again
 * without it, reporting it {@link ItemStatus#FAILED}.
 *
 * <p>A key is claimed once per batch, with its first occurrence's fingerprint. A repeat with the
 * same fingerprint shares that occurrence's fate. A repeat with another fingerprint is decided
 * against the key's record as it stands after the claim, and against the first occurrence's
 * fingerprint when that one was new; when the first occurrence was refused (a mismatch) but the
 * repeat could be claimed, the repeat is {@link ItemStatus#NOT_ATTEMPTED}, to be run by a later
 * batch.
 */
final class BatchExecution<T> {
  private static final Logger log = LoggerFactory.getLogger(BatchExecution.class);

  private final DataSource dataSource;

  /** The caller's transaction that every pass joins, or null: each pass begins its own. */
  private final Connection joined;

  /** Joined: the current pass's savepoint and the caller's lock timeout to restore after it. */
  private Savepoint passStart;

  private String callersLockTimeout;

  private final Claimer claimer;
  private final FailureCounter failures;
  private final Duration rollbackWait;
  private final Statements sql;
  private final InboxSettings settings;
  private final String scope;
  private final List<BatchItem<T>> items;
  private final BatchFailurePolicy policy;
  private final BatchHandler<T> handler;

  /** When not null, the optimistic pass hands it every new item in one call instead. */
  private final BatchHandler.SetBased<T> atOnce;

  /** The item index of each distinct key's first occurrence, in order. */
  private final List<Integer> firsts = new ArrayList<>();

  /** For each item, the position of its key in {@link #firsts}. */
  private final int[] distinctPosition;

  /** The items that repeat a key with a fingerprint other than its first occurrence's, in order. */
  private final List<Integer> divergentRepeats = new ArrayList<>();

  /**
   * By distinct position, the items whose failure broke their pass's connection: counted already,
   * and never run again in this batch.
   */
  private final Map<Integer, Slot> countedFailures = new HashMap<>();

  BatchExecution(
      DataSource dataSource,
      Connection joined,
      Claimer claimer,
      FailureCounter failures,
      Statements sql,
      InboxSettings settings,
      String scope,
      List<BatchItem<T>> items,
      BatchFailurePolicy policy,
      BatchHandler<T> handler) {
    this.dataSource = dataSource;
    this.joined = joined;
    this.claimer = claimer;
    this.failures = failures;
    this.rollbackWait = Transactions.rollbackWait(settings);
    this.sql = sql;
    this.settings = settings;
    this.scope = scope;
    this.items = items;
    this.policy = policy;
    this.handler = handler;
    this.atOnce =
        handler instanceof BatchHandler.SetBasedHandler<T> setBased ? setBased.handler() : null;
    this.distinctPosition = new int[items.size()];
    Map<String, Integer> positionByKey = new HashMap<>();
    for (int i = 0; i < items.size(); i++) {
      String key = items.get(i).key();
      Integer position = positionByKey.get(key);
      if (position == null) {
        position = firsts.size();
        positionByKey.put(key, position);
        firsts.add(i);
      }
      distinctPosition[i] = position;
      if (firsts.get(position) != i
          && !Arrays.equals(
              items.get(firsts.get(position)).fingerprint(), items.get(i).fingerprint())) {
        divergentRepeats.add(i);
      }
    }
  }

  /**
   * How many times a pass on the caller's transaction claims its keys, the first included, while
   * the partitioned storage's key guard answers 40001: each run's snapshot sees the rows that the
   * runs before waited for, so a second run needs a new race of another key to fail again.
   */
  private static final int JOINED_CLAIM_RUNS = 3;

  /** {@link Pass#failedAt} when a call for all new items threw, so the item is not known. */
  private static final int SOMEWHERE = Integer.MAX_VALUE;

  /** What happened to one distinct key in a pass. */
  private record Slot(Claim claim, ItemStatus status, StoredResult result, Throwable failure) {}

  /** The outcome of one pass over the first {@code limit} distinct keys. */
  private static final class Pass {
    final int limit;
    final Slot[] slots;

    /**
     * Optimistic pass: the distinct position whose handler threw, {@link #SOMEWHERE} when the
     * handler of all new items threw, or -1.
     */
    int failedAt = -1;

    /** Careful STOP pass: an earlier position that threw, so the pass must shrink to it; or -1. */
    int restartAt = -1;

    /**
     * By item index, what happened to a repeat that does not share its first occurrence's fate; a
     * null claim when it was not attempted.
     */
    final Map<Integer, Slot> repeats = new HashMap<>();

    Pass(int limit) {
      this.limit = limit;
      this.slots = new Slot[limit];
    }
  }

  BatchResult<T> run() throws SQLException {
    long start = System.nanoTime();
    Pass pass = runPass(firsts.size(), false);
    while (pass.restartAt >= 0) {
      // STOP: a key held elsewhere, with new items behind it; only the items up to it run now.
      pass = runPass(pass.restartAt + 1, false);
    }
    if (pass.failedAt >= 0) {
      int limit =
          policy == BatchFailurePolicy.STOP && pass.failedAt != SOMEWHERE
              ? pass.failedAt + 1
              : firsts.size();
      pass = runPass(limit, true);
      while (pass.restartAt >= 0) {
        pass = runPass(pass.restartAt + 1, true);
      }
    }
    BatchResult<T> result = results(pass);
    report(pass, result, start);
    return result;
  }

  private Pass runPass(int limit, boolean careful) throws SQLException {
    Pass pass = new Pass(limit);
    Connection connection = beginPass();
    // One guard for every handler call of the pass, not one per item.
    Connection handlerConnection = HandlerConnection.wrap(connection);
    try {
      Map<String, Claim> claims = claim(connection, limit, careful);
      decideDivergentRepeats(connection, claims, pass);
      int held = policy == BatchFailurePolicy.STOP ? firstHeldBeforeNew(claims, limit) : -1;
      if (held >= 0) {
        // Its new items after it would take effect before it: none of them runs in this pass.
        rollbackPass(connection);
        pass.restartAt = held;
        return pass;
      }
      List<String> completedWithoutResult = new ArrayList<>();
      List<Slot> completedWithResult = new ArrayList<>();
      List<BatchItem<T>> newItems = new ArrayList<>();
      for (int position = 0; position < limit; position++) {
        BatchItem<T> item = items.get(firsts.get(position));
        Claim claim = claims.get(item.key());
        if (countedFailures.containsKey(position)) {
          pass.slots[position] = countedFailures.get(position);
          continue;
        }
        if (!claim.isNew()) {
          pass.slots[position] =
              new Slot(claim, statusOf(claim.outcome()), claim.storedResult(), null);
          continue;
        }
        if (atOnce != null && !careful) {
          pass.slots[position] = new Slot(claim, ItemStatus.COMPLETED, null, null);
          newItems.add(item);
          continue;
        }
        // The optimistic pass rolls back as a whole: its transaction, or its savepoint when joined.
        Savepoint savepoint = careful ? connection.setSavepoint() : passStart;
        long handlerStart = System.nanoTime();
        try {
          StoredResult result = handler.handle(item, handlerConnection);
          Transactions.requireNotAbortedByHandler(connection);
          settings.listener().handled(scope, true, Claimer.since(handlerStart));
          Slot slot = new Slot(claim, ItemStatus.COMPLETED, result, null);
          pass.slots[position] = slot;
          if (result == null) {
            completedWithoutResult.add(item.key());
          } else {
            completedWithResult.add(slot);
          }
        } catch (Exception e) {
          handlerFailed(e, handlerStart);
          if (!rolledBack(connection, savepoint)) {
            failures.count(claim, item.fingerprint(), String.valueOf(e));
            countedFailures.put(position, new Slot(claim, ItemStatus.FAILED, null, e));
            if (careful) {
              pass.restartAt = policy == BatchFailurePolicy.STOP ? position : limit - 1;
            } else {
              pass.failedAt = position;
            }
            return pass;
          }
          if (!careful) {
            pass.failedAt = position;
            return pass;
          }
          markFailed(connection, item.key(), e);
          pass.slots[position] = new Slot(claim, ItemStatus.FAILED, null, e);
          if (policy == BatchFailurePolicy.STOP && anyNewAfter(claims, position, limit)) {
            rollbackPass(connection);
            pass.restartAt = position;
            return pass;
          }
        }
      }
      if (!newItems.isEmpty() && !handleAtOnce(connection, handlerConnection, newItems)) {
        pass.failedAt = SOMEWHERE;
        return pass;
      }
      if (careful) {
        complete(connection, completedWithoutResult, completedWithResult);
      } else {
        storeResults(connection, completedWithResult);
      }
      commitPass(connection);
      return pass;
    } catch (SQLException | RuntimeException | Error e) {
      rollbackPassQuietly(connection, e);
      throw e;
    } finally {
      endPass(connection);
    }
  }

  /** A transaction of its own, or a savepoint of the caller's under the inbox's lock timeout. */
  private Connection beginPass() throws SQLException {
    if (joined == null) {
      return Transactions.begin(dataSource);
    }
    passStart = joined.setSavepoint();
    try {
      callersLockTimeout = claimer.setLockTimeout(joined);
    } catch (SQLException | RuntimeException e) {
      rollbackPassQuietly(joined, e);
      throw e;
    }
    return joined;
  }

  private void commitPass(Connection connection) throws SQLException {
    if (joined == null) {
      Transactions.commit(connection);
      return;
    }
    joined.releaseSavepoint(passStart);
    passStart = null;
    claimer.restoreLockTimeout(joined, callersLockTimeout);
  }

  /** Undoes the pass; rolling back to the savepoint also restores the caller's lock timeout. */
  private void rollbackPass(Connection connection) throws SQLException {
    if (joined == null) {
      connection.rollback();
      return;
    }
    joined.rollback(passStart);
    joined.releaseSavepoint(passStart);
    passStart = null;
  }

  private void rollbackPassQuietly(Connection connection, Throwable cause) {
    if (joined == null) {
      Transactions.rollbackQuietly(connection, cause, rollbackWait);
      return;
    }
    if (passStart != null) {
      try {
        Transactions.rollbackAfterFailure(joined, passStart, rollbackWait);
        joined.releaseSavepoint(passStart);
      } catch (SQLException e) {
        cause.addSuppressed(e);
      }
      passStart = null;
    }
  }

  /**
   * Ends the pass: the inbox's own connection goes back; a joined pass's savepoint that a failed
   * optimistic pass rolled back to is released, so that the caller's transaction does not grow one
   * subtransaction deeper with every failure.
   */
  private void endPass(Connection connection) throws SQLException {
    if (joined == null) {
      Transactions.end(connection);
    } else if (passStart != null) {
      joined.releaseSavepoint(passStart);
      passStart = null;
    }
  }

  /** Undoes the claims of a pass and runs it again from its first statement. */
  private void restartPass(Connection connection) throws SQLException {
    if (joined == null) {
      connection.rollback();
      claimer.configureTransaction(connection);
      return;
    }
    joined.rollback(passStart);
    claimer.setLockTimeout(joined);
  }

  /**
   * The optimistic pass's one call for every new item.
   *
   * @return false when it threw and the pass rolled back
   */
  private boolean handleAtOnce(
      Connection connection, Connection handlerConnection, List<BatchItem<T>> newItems)
      throws SQLException {
    long handlerStart = System.nanoTime();
    try {
      atOnce.handle(Collections.unmodifiableList(newItems), handlerConnection);
      Transactions.requireNotAbortedByHandler(connection);
      settings.listener().handled(scope, true, Claimer.since(handlerStart));
      return true;
    } catch (Exception e) {
      handlerFailed(e, handlerStart);
      // A broken connection names no item either: the careful pass finds it.
      rolledBack(connection, passStart);
      return false;
    }
  }

  /**
   * Rolls back a handler's failure, to the savepoint or the whole transaction when it is null.
   *
   * @return false when the connection broke instead: it was aborted, and the pass's transaction is
   *     lost with it. A joined transaction lost that way is the caller's: that throws
   */
  private boolean rolledBack(Connection connection, Savepoint savepoint) throws SQLException {
    try {
      Transactions.rollbackAfterFailure(connection, savepoint, rollbackWait);
      return true;
    } catch (SQLException e) {
      if (!TransientFailures.isConnectionFailure(e) || joined != null) {
        throw e;
      }
      log.warn(
          "a handler failure in scope '{}' left its connection broken; it was aborted: {}",
          scope,
          e.getMessage());
      return false;
    }
  }

  /** Counts a handler's failure, and throws it on when it is not the items' fault. */
  private void handlerFailed(Exception e, long handlerStart) throws SQLException {
    settings.listener().handled(scope, false, Claimer.since(handlerStart));
    if (TransientFailures.isTransient(e)) {
      // Not the item's fault: the whole batch goes back to be run again or to the caller.
      throw asSqlException(e);
    }
  }

  private Map<String, Claim> claim(Connection connection, int limit, boolean careful)
      throws SQLException {
    RecordState writtenAs = careful ? RecordState.IN_PROGRESS : RecordState.COMPLETED;
    List<Claimer.Request> requests = new ArrayList<>(limit);
    Map<String, Claim> claims = new HashMap<>();
    for (int position = 0; position < limit; position++) {
      BatchItem<T> item = items.get(firsts.get(position));
      Slot counted = countedFailures.get(position);
      if (counted == null) {
        requests.add(new Claimer.Request(item.key(), item.fingerprint()));
      } else {
        claims.put(item.key(), counted.claim());
      }
    }
    if (requests.isEmpty()) {
      return claims;
    }
    long start = System.nanoTime();
    for (int run = 1; ; run++) {
      try {
        claims.putAll(claimOrFindTheHeldKeys(connection, requests, writtenAs));
        break;
      } catch (SQLException e) {
        if (joined == null || run == JOINED_CLAIM_RUNS || !claimer.isKeyInOtherGeneration(e)) {
          throw e;
        }
        // The partitioned storage's key guard found a key committed in another generation while
        // the claim waited for its lock, or the retention moved a key's row meanwhile (docs/
        // scale.md, Limits). The inbox's own transaction is run again by executeBatch; the
        // caller's cannot be, but its savepoint can: rolled back to it, a new statement's snapshot
        // sees that row where it is now.
        restartPass(connection);
      }
    }
    settings.listener().claimLatency(scope, Claimer.since(start));
    return claims;
  }

  private Map<String, Claim> claimOrFindTheHeldKeys(
      Connection connection, List<Claimer.Request> requests, RecordState writtenAs)
      throws SQLException {
    try {
      return joined == null
          ? claimer.claimAsFirstStatement(connection, scope, requests, null, writtenAs)
          : claimer.claim(connection, scope, requests, null, writtenAs);
    } catch (SQLException e) {
      if (!SqlStates.isLockTimeout(e)) {
        throw e;
      }
      // Some key is held by a transaction that outlived lockTimeout: find which, one at a time.
      restartPass(connection);
      Map<String, Claim> claims = new HashMap<>();
      for (Claimer.Request request : requests) {
        claims.put(
            request.key(),
            claimer.claimUnderSavepoint(connection, scope, request, null, writtenAs));
      }
      return claims;
    }
  }

  /**
   * Under STOP, the first position whose key is held elsewhere ({@code IN_PROGRESS}: a live lease,
   * a transaction that claimed it) with a new item after it, or -1. The held item is retried later,
   * so no item after it may take effect before it.
   */
  private int firstHeldBeforeNew(Map<String, Claim> claims, int limit) {
    for (int position = 0; position < limit; position++) {
      if (countedFailures.containsKey(position)) {
        continue;
      }
      Claim claim = claims.get(items.get(firsts.get(position)).key());
      if (claim.outcome() == ClaimOutcome.IN_PROGRESS) {
        return anyNewAfter(claims, position, limit) ? position : -1;
      }
    }
    return -1;
  }

  private boolean anyNewAfter(Map<String, Claim> claims, int position, int limit) {
    for (int later = position + 1; later < limit; later++) {
      if (claims.get(items.get(firsts.get(later)).key()).isNew()) {
        return true;
      }
    }
    return false;
  }

  private void markFailed(Connection connection, String key, Exception error) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.failInTransaction)) {
      ps.setString(1, FailureText.of(error));
      ps.setString(2, scope);
      ps.setString(3, key);
      expectOne(ps.executeUpdate(), key, StateMachine.Transition.FAIL);
    }
  }

  private void complete(Connection connection, List<String> withoutResult, List<Slot> withResult)
      throws SQLException {
    if (!withoutResult.isEmpty()) {
      try (PreparedStatement ps = connection.prepareStatement(sql.completeMany)) {
        ps.setString(1, scope);
        ps.setArray(2, connection.createArrayOf("text", withoutResult.toArray(new String[0])));
        int updated = ps.executeUpdate();
        if (updated != withoutResult.size()) {
          throw StateMachine.unexpectedRowCount(
              StateMachine.Transition.COMPLETE, scope, withoutResult, updated);
        }
      }
    }
    if (!withResult.isEmpty()) {
      try (PreparedStatement ps = connection.prepareStatement(sql.complete)) {
        for (Slot slot : withResult) {
          Rows.setResult(connection, ps, 1, slot.result());
          ps.setString(5, scope);
          ps.setString(6, slot.claim().key());
          ps.setLong(7, slot.claim().fencingToken());
          ps.addBatch();
        }
        int[] counts = ps.executeBatch();
        for (int i = 0; i < counts.length; i++) {
          expectOne(counts[i], withResult.get(i).claim().key(), StateMachine.Transition.COMPLETE);
        }
      }
    }
  }

  private void storeResults(Connection connection, List<Slot> withResult) throws SQLException {
    if (withResult.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = connection.prepareStatement(sql.storeResult)) {
      for (Slot slot : withResult) {
        Rows.setResult(connection, ps, 1, slot.result());
        ps.setString(5, scope);
        ps.setString(6, slot.claim().key());
        ps.setLong(7, slot.claim().fencingToken());
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      for (int i = 0; i < counts.length; i++) {
        expectOne(counts[i], withResult.get(i).claim().key(), StateMachine.Transition.STORE_RESULT);
      }
    }
  }

  private void expectOne(int updated, String key, StateMachine.Transition transition) {
    if (updated != 1) {
      throw StateMachine.unexpectedRowCount(transition, scope, key, updated);
    }
  }

  private BatchResult<T> results(Pass pass) {
    List<ItemResult<T>> results = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      BatchItem<T> item = items.get(i);
      int position = distinctPosition[i];
      if (position >= pass.limit) {
        results.add(new ItemResult<>(item, ItemStatus.NOT_ATTEMPTED, 0, null, null, null));
        continue;
      }
      Slot slot = pass.slots[position];
      ItemStatus status = slot.status();
      if (firsts.get(position) != i) {
        Slot own = pass.repeats.get(i);
        if (own == null) {
          status = status.isSettled() ? ItemStatus.DUPLICATE : status;
        } else if (own.claim() == null) {
          results.add(new ItemResult<>(item, ItemStatus.NOT_ATTEMPTED, 0, null, null, null));
          continue;
        } else {
          slot = own;
          status = own.status();
        }
      }
      results.add(
          new ItemResult<>(
              item,
              status,
              slot.claim().attempts(),
              slot.result(),
              slot.failure(),
              slot.claim().lockedUntil()));
    }
    return new BatchResult<>(results);
  }

  /**
   * Decides the repeats whose fingerprint differs from their first occurrence's, from one read of
   * their keys' rows after the claim; the others share their first occurrence's fate. Comparing
   * with the first occurrence alone would answer a repeat that matches the record with the first
   * occurrence's mismatch, and so dead-letter a valid message.
   */
  private void decideDivergentRepeats(Connection connection, Map<String, Claim> claims, Pass pass)
      throws SQLException {
    List<Integer> repeats = new ArrayList<>();
    List<Claimer.Request> requests = new ArrayList<>();
    for (int i : divergentRepeats) {
      if (distinctPosition[i] < pass.limit) {
        repeats.add(i);
        requests.add(new Claimer.Request(items.get(i).key(), items.get(i).fingerprint()));
      }
    }
    if (repeats.isEmpty()) {
      return;
    }
    List<Claim> answers = claimer.settledEach(connection, scope, requests);
    for (int r = 0; r < repeats.size(); r++) {
      int i = repeats.get(r);
      BatchItem<T> repeat = items.get(i);
      Claim first = claims.get(repeat.key());
      Claim answer = answers.get(r);
      if (first.isNew()) {
        // This batch owns the key and runs its first occurrence: the repeat is a duplicate of it,
        // unless it mismatches that occurrence or the record's fingerprint.
        byte[] claimed = items.get(firsts.get(distinctPosition[i])).fingerprint();
        if ((answer != null && answer.outcome() == ClaimOutcome.MISMATCH)
            || Fingerprints.mismatch(claimed, repeat.fingerprint())) {
          Claim mismatch =
              new Claim(
                  scope,
                  repeat.key(),
                  ClaimOutcome.MISMATCH,
                  first.attempts(),
                  first.fencingToken(),
                  null,
                  null,
                  null,
                  repeat.fingerprint());
          pass.repeats.put(i, new Slot(mismatch, ItemStatus.MISMATCH, null, null));
        }
      } else if (answer == null) {
        // The record would let the repeat run, but its key's claim in this batch was refused.
        pass.repeats.put(i, new Slot(null, ItemStatus.NOT_ATTEMPTED, null, null));
      } else {
        pass.repeats.put(
            i, new Slot(answer, statusOf(answer.outcome()), answer.storedResult(), null));
      }
    }
  }

  private void report(Pass pass, BatchResult<T> result, long start) {
    Map<ClaimOutcome, Integer> outcomes = new EnumMap<>(ClaimOutcome.class);
    for (Slot slot : pass.slots) {
      outcomes.merge(slot.claim().outcome(), 1, Integer::sum);
    }
    for (int i = 0; i < items.size(); i++) {
      if (distinctPosition[i] < pass.limit && firsts.get(distinctPosition[i]) != i) {
        Slot own = pass.repeats.get(i);
        if (own == null) {
          outcomes.merge(ClaimOutcome.DUPLICATE, 1, Integer::sum);
        } else if (own.claim() != null) {
          outcomes.merge(own.claim().outcome(), 1, Integer::sum);
        }
      }
    }
    outcomes.forEach((outcome, count) -> settings.listener().claimed(scope, outcome, count));
    settings.listener().batch(scope, result.items().size(), Claimer.since(start));
  }

  static ItemStatus statusOf(ClaimOutcome outcome) {
    switch (outcome) {
      case DUPLICATE:
        return ItemStatus.DUPLICATE;
      case IN_PROGRESS:
        return ItemStatus.IN_PROGRESS;
      case MISMATCH:
        return ItemStatus.MISMATCH;
      case GAVE_UP:
        return ItemStatus.GAVE_UP;
      default:
        throw new IllegalArgumentException(outcome + " is not a settled claim outcome");
    }
  }

  static SQLException asSqlException(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException sql && sql.getSQLState() != null) {
        return sql;
      }
    }
    return new SQLException(t.toString(), "08000", t);
  }
}
