package dev.inbox.internal;

import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchHandler;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxAdmin;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.Leases;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import dev.inbox.TransactionalHandler;
import dev.inbox.TransientFailures;
import dev.inbox.spi.BatchClaims;
import dev.inbox.spi.CallerTransactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Inbox} on PostgreSQL. Thread-safe: it keeps no per-call state between calls.
 *
 * <p>It chooses how to claim, so that callers never have to: {@link #execute} in a transaction of
 * its own reserves a key that has no record (a transaction-level advisory lock, and the record
 * written once, with the result, in the commit's round trip); a key with a record, and every other
 * path, claims the row itself. Joining the caller's transaction ({@link CallerTransactions}), it
 * works under a savepoint and never commits.
 */
public final class PostgresInbox implements Inbox, BatchClaims {
  private static final Logger log = LoggerFactory.getLogger(PostgresInbox.class);
  private static final int MAX_BATCH_RETRIES = 3;

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final CallerTransactions callerTransactions;
  private final Statements sql;
  private final Claimer claimer;
  private final Janitor janitor;
  private final FailureCounter failures;
  private final PostgresLeases leases;
  private final PostgresAdmin admin;

  /** How long a rollback after a failure waits for the server before the connection is aborted. */
  private final Duration rollbackWait;

  private PostgresInbox(
      DataSource dataSource, InboxSettings settings, CallerTransactions callerTransactions) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.callerTransactions = callerTransactions;
    this.sql = new Statements(settings);
    this.claimer = new Claimer(sql, settings);
    this.rollbackWait = Transactions.rollbackWait(settings);
    this.failures = new FailureCounter(dataSource, claimer, sql, rollbackWait);
    this.leases = new PostgresLeases(dataSource, settings, sql, this);
    this.admin = new PostgresAdmin(dataSource, settings, sql, claimer);
    this.janitor =
        settings.janitorInterval().isZero()
            ? null
            : Janitor.start(
                settings.schema() + "." + settings.table(),
                settings.janitorInterval(),
                admin::janitorRun);
  }

  /** Creates the inbox and starts its janitor, unless the janitor interval is zero. */
  public static Inbox start(
      DataSource dataSource, InboxSettings settings, CallerTransactions callerTransactions) {
    return new PostgresInbox(
        Objects.requireNonNull(dataSource, "dataSource"),
        Objects.requireNonNull(settings, "settings"),
        Objects.requireNonNull(callerTransactions, "callerTransactions"));
  }

  @Override
  public InboxSettings settings() {
    return settings;
  }

  @Override
  public void migrate() {
    InboxSchema.migrate(dataSource, settings);
  }

  @Override
  public Leases leases() {
    return leases;
  }

  @Override
  public InboxAdmin admin() {
    return admin;
  }

  Duration rollbackWait() {
    return rollbackWait;
  }

  @Override
  public Execution execute(
      String scope, String key, byte[] fingerprint, TransactionalHandler handler) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Objects.requireNonNull(handler, "handler");
    Claimer.Request request = new Claimer.Request(key, fingerprint);
    Connection joined = callersTransaction(scope, key);
    if (joined != null) {
      return executeJoined(joined, scope, request, handler);
    }
    try {
      return executeOwn(scope, request, handler, true);
    } catch (ReservationLostException e) {
      if (e.claimantStillOpen) {
        // Its claim has been waited for lockTimeout already: waiting again would double the
        // bound that execute() promises.
        return new Execution(claimer.lockedElsewhere(scope, key), null);
      }
      // Another claimant recorded the key while the handler ran, and nothing of this run was
      // committed: claim the row itself now, which answers with that claimant's outcome.
      log.debug("the reservation of key '{}' in scope '{}' was lost; claiming again", key, scope);
      return executeOwn(scope, request, handler, false);
    }
  }

  /**
   * execute() in a transaction of the inbox's own. A failed attempt is counted after the connection
   * went back to the pool: holding one while waiting for another starves a pool whose calls all
   * fail at once.
   */
  private Execution executeOwn(
      String scope, Claimer.Request request, TransactionalHandler handler, boolean reserve) {
    String key = request.key();
    Connection connection = null;
    Claim claim;
    CountedFailure failed;
    try {
      connection = Transactions.begin(dataSource);
      Held held =
          reserve
              ? reserve(connection, scope, request)
              // Written in its final state: execute() commits only when its handler succeeded.
              : new Held(
                  claimFirst(connection, scope, request, null, RecordState.COMPLETED), false);
      claim = held.claim();
      if (!claim.isNew()) {
        connection.rollback();
        return new Execution(claim, claim.storedResult());
      }
      try {
        StoredResult result = runHandler(scope, key, connection, null, handler);
        commit(connection, held, result);
        reportDeferredClaim(scope, held);
        return new Execution(claim, result);
      } catch (CountedFailure e) {
        reportDeferredClaim(scope, held);
        failed = e;
      } catch (InboxDatabaseException e) {
        reportDeferredClaim(scope, held);
        throw e;
      }
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, rollbackWait);
      }
      throw new InboxDatabaseException(
          scope,
          key,
          "execute failed; if it failed during commit the outcome is unknown and a retry is safe",
          e);
    } catch (ReservationLostException e) {
      Transactions.rollbackQuietly(connection, e, rollbackWait);
      throw e;
    } finally {
      Transactions.endQuietly(connection);
    }
    failures.count(claim, request.fingerprint(), String.valueOf(failed.cause));
    throw new HandlerFailedException(scope, key, claim.attempts(), failed.cause);
  }

  /**
   * Reports a reserved key's claim once its run is decided: a reservation lost to another claimant
   * is not a claim of its own, and the claim that follows it reports itself.
   */
  private void reportDeferredClaim(String scope, Held held) {
    if (held.recordDeferred()) {
      settings.listener().claimed(scope, ClaimOutcome.NEW, 1);
    }
  }

  /** Records a NEW claim's result and commits, in one round trip for a deferred record. */
  private void commit(Connection connection, Held held, StoredResult result) throws SQLException {
    if (held.recordDeferred()) {
      insertCompleted(connection, sql.insertCompletedAndCommit, held.claim(), result);
      // Ends the transaction on the driver's side too; the server has committed already.
      connection.commit();
      return;
    }
    if (result != null) {
      storeResult(connection, held.claim(), result);
    }
    Transactions.commit(connection);
  }

  /**
   * execute() on the caller's transaction, under a savepoint that the claim and the handler share:
   * a failing handler is rolled back to it, with its claim, and the caller's transaction goes on.
   */
  private Execution executeJoined(
      Connection transaction, String scope, Claimer.Request request, TransactionalHandler handler) {
    String key = request.key();
    try {
      requireTransaction(transaction);
      Savepoint savepoint = transaction.setSavepoint();
      Claim claim = claimInCallersTransaction(transaction, scope, request);
      if (!claim.isNew()) {
        transaction.releaseSavepoint(savepoint);
        return new Execution(claim, claim.storedResult());
      }
      StoredResult result;
      try {
        result = runHandler(scope, key, transaction, savepoint, handler);
      } catch (CountedFailure counted) {
        countJoinedFailure(
            transaction, claim, request.fingerprint(), String.valueOf(counted.cause));
        throw new HandlerFailedException(scope, key, claim.attempts(), counted.cause);
      }
      storeResult(transaction, claim, result);
      transaction.releaseSavepoint(savepoint);
      return new Execution(claim, result);
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          scope, key, "execute on the caller's transaction failed; roll it back", e);
    }
  }

  /** A handler's failure that counts as an attempt; its writes are rolled back already. */
  private static final class CountedFailure extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Exception cause;

    CountedFailure(Exception cause) {
      super(null, null, false, false);
      this.cause = cause;
    }
  }

  /**
   * Runs the handler of a NEW claim. On failure rolls back (to the savepoint, or the whole
   * transaction when it is null) and either throws an {@link InboxDatabaseException} for a failure
   * that says nothing about the message, or a {@link CountedFailure}.
   */
  private StoredResult runHandler(
      String scope,
      String key,
      Connection connection,
      Savepoint savepoint,
      TransactionalHandler handler)
      throws CountedFailure, SQLException {
    long handlerStart = System.nanoTime();
    try {
      StoredResult result = handler.handle(HandlerConnection.wrap(connection));
      Transactions.requireNotAbortedByHandler(connection);
      settings.listener().handled(scope, true, Claimer.since(handlerStart));
      return result;
    } catch (Error e) {
      // Thrown on uncounted, but never past a rollback that could wait forever.
      rollbackQuietly(connection, savepoint, e);
      settings.listener().handled(scope, false, Claimer.since(handlerStart));
      throw e;
    } catch (Exception e) {
      rollbackQuietly(connection, savepoint, e);
      settings.listener().handled(scope, false, Claimer.since(handlerStart));
      if (TransientFailures.isConnectionFailure(e)) {
        throw new InboxDatabaseException(
            scope,
            key,
            "database connection failed while the handler ran; nothing was committed",
            BatchExecution.asSqlException(e));
      }
      if (TransientFailures.isLockTimeout(e)) {
        throw new InboxDatabaseException(
            scope,
            key,
            "the handler waited longer than lockTimeout ("
                + settings.lockTimeout().toMillis()
                + " ms) for a lock held by another transaction; nothing was committed and the"
                + " attempt is not counted, so run it again later",
            BatchExecution.asSqlException(e));
      }
      if (TransientFailures.isRetryableCause(e)) {
        throw new InboxDatabaseException(
            scope,
            key,
            "the handler's transaction hit a deadlock or serialization failure; nothing was"
                + " committed and the attempt is not counted, so run it again",
            BatchExecution.asSqlException(e));
      }
      throw new CountedFailure(e);
    }
  }

  private void rollbackQuietly(Connection connection, Savepoint savepoint, Throwable cause) {
    if (savepoint == null) {
      Transactions.rollbackQuietly(connection, cause, rollbackWait);
      return;
    }
    try {
      Transactions.rollbackAfterFailure(connection, savepoint, rollbackWait);
      // Released too: the caller's transaction goes on, one subtransaction shallower.
      connection.releaseSavepoint(savepoint);
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /** What a claim in a transaction of the inbox's own found, and whether its record is deferred. */
  private record Held(Claim claim, boolean recordDeferred) {}

  /**
   * Reserves the key as the transaction's first statement. When another transaction holds the key's
   * lock, waits for it (at most lockTimeout, after which the transaction is aborted and the answer
   * is IN_PROGRESS), then decides from the record that transaction left, if any.
   */
  private Held reserve(Connection connection, String scope, Claimer.Request request)
      throws SQLException {
    long start = System.nanoTime();
    Claimer.Reserved reserved = claimer.reserveAsFirstStatement(connection, scope, request);
    if (reserved.lockHeldElsewhere()) {
      try {
        reserved = claimer.waitForReservation(connection, scope, request);
      } catch (SQLException e) {
        if (!SqlStates.isLockTimeout(e)) {
          throw e;
        }
        reserved = new Claimer.Reserved(claimer.lockedElsewhere(scope, request.key()), false);
      }
    }
    Claim claim = reserved.claim();
    boolean recordDeferred = claim != null && claim.isNew();
    if (claim == null) {
      claim = claimRecordedKey(connection, scope, request);
    }
    settings.listener().claimLatency(scope, Claimer.since(start));
    if (!recordDeferred) {
      settings.listener().claimed(scope, claim.outcome(), 1);
    }
    return new Held(claim, recordDeferred);
  }

  /**
   * Claims, in a reservation's transaction, a key whose record can be claimed again; written
   * COMPLETED, since the transaction commits only with the handler's success. A lock timeout
   * answers IN_PROGRESS and leaves the transaction aborted.
   */
  private Claim claimRecordedKey(Connection transaction, String scope, Claimer.Request request)
      throws SQLException {
    try {
      return claimer
          .claim(transaction, scope, List.of(request), null, RecordState.COMPLETED)
          .get(request.key());
    } catch (SQLException e) {
      if (!SqlStates.isLockTimeout(e)) {
        throw e;
      }
      return claimer.lockedElsewhere(scope, request.key());
    }
  }

  /**
   * Inserts a reserved key's record, COMPLETED with its result. A record that another claimant
   * wrote first (committed: unique violation; still in flight past lockTimeout: lock timeout) means
   * the reservation is lost, and the error keeps the rest of the round trip, a COMMIT included,
   * from running.
   */
  private void insertCompleted(
      Connection transaction, String statement, Claim claim, StoredResult result)
      throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement(statement)) {
      ps.setString(1, claim.scope());
      ps.setString(2, claim.key());
      ps.setBytes(3, claim.fingerprint());
      Rows.setResult(transaction, ps, 4, result);
      ps.execute();
    } catch (SQLException e) {
      if (SqlStates.isUniqueViolation(e) && isInboxKey(SqlStates.constraint(e))) {
        throw new ReservationLostException(
            claim.scope(), claim.key(), "another claimant recorded the key first", false, e);
      }
      if (SqlStates.isLockTimeout(e)) {
        throw new ReservationLostException(
            claim.scope(),
            claim.key(),
            "another claimant's transaction wrote the key and was still open after lockTimeout",
            true,
            e);
      }
      throw e;
    }
  }

  /**
   * Whether a unique violation is on the inbox's primary key: the COMMIT in the same round trip
   * also checks the handler's deferred constraints, whose violation is the handler's failure, not a
   * lost reservation. A server that names no constraint is taken to mean the inbox's key.
   */
  private boolean isInboxKey(String constraint) {
    return constraint == null
        || constraint.equals(settings.table() + "_pkey")
        // A partition's primary key, on the partitioned storage.
        || constraint.matches(Pattern.quote(settings.table()) + "_g[0-9]+_pkey");
  }

  @Override
  public <T> BatchResult<T> executeBatch(
      String scope, List<BatchItem<T>> items, BatchFailurePolicy policy, BatchHandler<T> handler) {
    InboxKeys.validateScope(scope);
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(handler, "handler");
    for (BatchItem<T> item : items) {
      InboxKeys.validateKey(Objects.requireNonNull(item, "batch item").key());
    }
    if (items.isEmpty()) {
      return new BatchResult<>(List.of());
    }
    Connection joined = callersTransaction(scope, null);
    if (joined != null) {
      try {
        requireTransaction(joined);
      } catch (SQLException e) {
        throw new InboxDatabaseException(scope, null, "the caller's transaction is unusable", e);
      }
    }
    // A deadlock or serialization failure in the caller's transaction is the caller's to retry.
    int maxRuns = joined == null ? MAX_BATCH_RETRIES : 1;
    for (int run = 1; ; run++) {
      try {
        return new BatchExecution<>(
                dataSource, joined, claimer, failures, sql, settings, scope, items, policy, handler)
            .run();
      } catch (SQLException e) {
        if (TransientFailures.isRetryable(e) && run < maxRuns) {
          log.debug("batch in scope '{}' hit {}; running it again", scope, e.getSQLState());
          continue;
        }
        throw new InboxDatabaseException(
            scope,
            null,
            "batch of "
                + items.size()
                + (joined == null
                    ? " failed; nothing of it was committed unless the commit itself failed"
                    : " failed on the caller's transaction; roll it back"),
            e);
      }
    }
  }

  @Override
  public Claim claim(Connection transaction, String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try {
      requireTransaction(transaction);
      return claimInCallersTransaction(transaction, scope, new Claimer.Request(key, fingerprint));
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "claim on the caller's transaction failed", e);
    }
  }

  @Override
  public List<Claim> claimAll(
      Connection transaction, String scope, List<String> keys, List<byte[]> fingerprints) {
    InboxKeys.validateScope(scope);
    Objects.requireNonNull(keys, "keys");
    if (fingerprints != null && fingerprints.size() != keys.size()) {
      throw new IllegalArgumentException(
          "fingerprints must have one entry per key: "
              + fingerprints.size()
              + " fingerprints for "
              + keys.size()
              + " keys");
    }
    // The first occurrence of each key, claimed together; a repeat reads what the first wrote.
    List<Claimer.Request> requests = new ArrayList<>(keys.size());
    Map<String, Claimer.Request> firsts = new LinkedHashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      InboxKeys.validateKey(key);
      Claimer.Request request =
          new Claimer.Request(key, fingerprints == null ? null : fingerprints.get(i));
      requests.add(request);
      firsts.putIfAbsent(key, request);
    }
    if (firsts.isEmpty()) {
      return List.of();
    }
    try {
      requireTransaction(transaction);
      long start = System.nanoTime();
      Map<String, Claim> claims =
          claimer.claimAllInCallersTransaction(transaction, scope, List.copyOf(firsts.values()));
      settings.listener().claimLatency(scope, Claimer.since(start));
      claims.values().stream()
          .collect(Collectors.groupingBy(Claim::outcome, Collectors.counting()))
          .forEach(
              (outcome, count) -> settings.listener().claimed(scope, outcome, count.intValue()));
      List<Claim> answers = new ArrayList<>(keys.size());
      for (Claimer.Request request : requests) {
        answers.add(
            firsts.get(request.key()) == request
                ? claims.get(request.key())
                : claimInCallersTransaction(transaction, scope, request));
      }
      return answers;
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          scope, null, "claim of a batch on the caller's transaction failed", e);
    }
  }

  private Claim claimInCallersTransaction(
      Connection transaction, String scope, Claimer.Request request) throws SQLException {
    long start = System.nanoTime();
    Claim claim = claimer.claimInCallersTransaction(transaction, scope, request);
    settings.listener().claimLatency(scope, Claimer.since(start));
    settings.listener().claimed(scope, claim.outcome(), 1);
    return claim;
  }

  /**
   * One key claimed by the first statement of a fresh transaction; a lock timeout answers
   * IN_PROGRESS and leaves the transaction aborted.
   */
  Claim claimFirst(
      Connection connection,
      String scope,
      Claimer.Request request,
      String leaseOwner,
      RecordState writtenAs)
      throws SQLException {
    long start = System.nanoTime();
    Claim claim;
    try {
      claim =
          claimer
              .claimAsFirstStatement(connection, scope, List.of(request), leaseOwner, writtenAs)
              .get(request.key());
    } catch (SQLException e) {
      if (!SqlStates.isLockTimeout(e)) {
        throw e;
      }
      claim = claimer.lockedElsewhere(scope, request.key());
    }
    settings.listener().claimLatency(scope, Claimer.since(start));
    settings.listener().claimed(scope, claim.outcome(), 1);
    return claim;
  }

  @Override
  public void complete(Connection transaction, Claim claim, StoredResult result) {
    requireNew(claim);
    try {
      requireCommittable(transaction);
      // The claim wrote the record COMPLETED: storing the result, none included, also refuses a
      // claim whose row a rollback undid or another transaction wrote.
      storeResult(transaction, claim, result);
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          claim.scope(), claim.key(), "complete on the caller's transaction failed", e);
    }
  }

  @Override
  public void recordFailure(Connection connection, Claim claim, String error) {
    Objects.requireNonNull(connection, "connection");
    requireNew(claim);
    failures.countOn(connection, claim, claim.fingerprint(), error);
  }

  /**
   * A joined attempt's failure must be seen by a later claim of the key in the same transaction and
   * outlive the caller's rollback. Where the caller can run work after a rollback, the attempt is
   * counted inside its transaction (a commit keeps it) and, should that transaction roll back,
   * again on its connection afterwards; a second connection taken meanwhile could wait for a pool
   * that the callers hold entirely, and then be dropped. Otherwise it is counted at once on a
   * connection of the inbox's own.
   */
  private void countJoinedFailure(
      Connection transaction, Claim claim, byte[] fingerprint, String error) {
    boolean afterRollback =
        callerTransactions.runAfterRollback(
            connection -> {
              try {
                failures.countOn(connection, claim, fingerprint, error);
              } catch (IllegalStateException stillInATransaction) {
                failures.count(claim, fingerprint, error);
              }
            });
    if (afterRollback) {
      failures.countInCallersTransaction(transaction, claim, fingerprint, error);
    } else {
      failures.count(claim, fingerprint, error);
    }
  }

  @Override
  public void close() {
    if (janitor != null) {
      janitor.stop();
    }
  }

  /** The caller's transaction to join, or null to begin one of the inbox's own. */
  private Connection callersTransaction(String scope, String key) {
    try {
      return callerTransactions.current();
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          scope, key, "getting the caller's transaction to join failed", e);
    }
  }

  private void storeResult(Connection connection, Claim claim, StoredResult result)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.storeResult)) {
      Rows.setResult(connection, ps, 1, result);
      ps.setString(5, claim.scope());
      ps.setString(6, claim.key());
      ps.setLong(7, claim.fencingToken());
      expectOneRow(ps.executeUpdate(), claim, StateMachine.Transition.STORE_RESULT);
    }
  }

  private static void expectOneRow(int updated, Claim claim, StateMachine.Transition transition) {
    if (updated != 1) {
      throw StateMachine.unexpectedRowCount(transition, claim.scope(), claim.key(), updated);
    }
  }

  /** Binds {@link Statements#complete}: the result, then which claim, by its fencing token. */
  static void bindCompletion(
      Connection connection,
      PreparedStatement ps,
      String scope,
      String key,
      long fencingToken,
      StoredResult result)
      throws SQLException {
    Rows.setResult(connection, ps, 1, result);
    ps.setString(5, scope);
    ps.setString(6, key);
    ps.setLong(7, fencingToken);
  }

  static void requireTransaction(Connection transaction) throws SQLException {
    if (transaction.getAutoCommit()) {
      throw new IllegalArgumentException(
          "the inbox needs a connection inside a transaction (autoCommit=false) to claim on the"
              + " caller's transaction; use execute(...) to let the inbox own the transaction");
    }
  }

  /**
   * A completion on an aborted transaction would be reported done while the caller's COMMIT rolls
   * it back, the key's record with it; the server would refuse the statement, but say less.
   */
  private static void requireCommittable(Connection transaction) throws SQLException {
    Transactions.requireNotAborted(
        transaction,
        "the caller's transaction was aborted by an earlier SQL error, so nothing of it can"
            + " commit, the key's record included; roll it back and run the work again");
  }

  private static void requireNew(Claim claim) {
    Objects.requireNonNull(claim, "claim");
    if (claim.outcome() != ClaimOutcome.NEW) {
      throw new IllegalArgumentException(
          "only a NEW claim can be completed or failed, but key '"
              + claim.key()
              + "' in scope '"
              + claim.scope()
              + "' was "
              + claim.outcome());
    }
  }
}
