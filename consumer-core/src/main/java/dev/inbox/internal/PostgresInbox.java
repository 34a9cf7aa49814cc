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
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxException;
import dev.inbox.InboxKeys;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.LeaseToken;
import dev.inbox.NewItemsHandler;
import dev.inbox.RecordState;
import dev.inbox.ReleaseResult;
import dev.inbox.Reservation;
import dev.inbox.ReservationLostException;
import dev.inbox.StoredResult;
import dev.inbox.TransactionalHandler;
import dev.inbox.TransientFailures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The {@link Inbox} on PostgreSQL. Thread-safe: it keeps no per-call state between calls. */
public final class PostgresInbox implements Inbox {
  private static final Logger log = LoggerFactory.getLogger(PostgresInbox.class);
  private static final int MAX_BATCH_RETRIES = 3;

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final Statements sql;
  private final Claimer claimer;
  private final Janitor janitor;
  private final FailureCounter failures;

  /** How long a rollback after a failure waits for the server before the connection is aborted. */
  private final Duration rollbackWait;

  private PostgresInbox(DataSource dataSource, InboxSettings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.sql = new Statements(settings);
    this.claimer = new Claimer(sql, settings);
    this.rollbackWait = Transactions.rollbackWait(settings);
    this.failures = new FailureCounter(dataSource, claimer, sql, rollbackWait);
    this.janitor =
        settings.janitorInterval().isZero()
            ? null
            : Janitor.start(
                settings.schema() + "." + settings.table(),
                settings.janitorInterval(),
                this::janitorRun);
  }

  /** Creates the inbox and starts its janitor, unless the janitor interval is zero. */
  public static PostgresInbox start(DataSource dataSource, InboxSettings settings) {
    return new PostgresInbox(
        Objects.requireNonNull(dataSource, "dataSource"),
        Objects.requireNonNull(settings, "settings"));
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
  public Execution execute(
      String scope, String key, byte[] fingerprint, TransactionalHandler handler) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Objects.requireNonNull(handler, "handler");
    Claimer.Request request = new Claimer.Request(key, fingerprint);
    Connection connection = null;
    try {
      connection = Transactions.begin(dataSource);
      // execute() commits only when its handler succeeded, so the row is written in its final
      // state.
      Claim claim = claimFirst(connection, scope, request, null, RecordState.COMPLETED);
      if (!claim.isNew()) {
        connection.rollback();
        return new Execution(claim, claim.storedResult());
      }
      StoredResult result;
      long handlerStart = System.nanoTime();
      try {
        result = handler.handle(connection);
        Transactions.requireNotAbortedByHandler(connection);
        settings.listener().handled(scope, true, Claimer.since(handlerStart));
      } catch (Error e) {
        // Thrown on uncounted, but never past a rollback that could wait forever.
        Transactions.rollbackQuietly(connection, e, rollbackWait);
        settings.listener().handled(scope, false, Claimer.since(handlerStart));
        throw e;
      } catch (Exception e) {
        Transactions.rollbackQuietly(connection, e, rollbackWait);
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
        failures.count(claim, fingerprint, String.valueOf(e));
        throw new HandlerFailedException(scope, key, claim.attempts(), e);
      }
      if (result != null) {
        storeResult(connection, claim, result);
      }
      Transactions.commit(connection);
      return new Execution(claim, result);
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, rollbackWait);
      }
      throw new InboxDatabaseException(
          scope,
          key,
          "execute failed; if it failed during commit the outcome is unknown and a retry is safe",
          e);
    } finally {
      Transactions.endQuietly(connection);
    }
  }

  @Override
  public <T> BatchResult<T> executeBatch(
      String scope, List<BatchItem<T>> items, BatchFailurePolicy policy, BatchHandler<T> handler) {
    Objects.requireNonNull(handler, "handler");
    return runBatch(scope, items, policy, handler, null);
  }

  @Override
  public <T> BatchResult<T> executeBatchAtOnce(
      String scope,
      List<BatchItem<T>> items,
      BatchFailurePolicy policy,
      NewItemsHandler<T> handler) {
    Objects.requireNonNull(handler, "handler");
    // The careful pass that finds a failing item calls the handler with one item at a time.
    BatchHandler<T> oneByOne =
        (item, tx) -> {
          handler.handle(List.of(item), tx);
          return null;
        };
    return runBatch(scope, items, policy, oneByOne, handler);
  }

  /** {@code atOnce}, when not null, handles the new items of the optimistic pass in one call. */
  private <T> BatchResult<T> runBatch(
      String scope,
      List<BatchItem<T>> items,
      BatchFailurePolicy policy,
      BatchHandler<T> handler,
      NewItemsHandler<T> atOnce) {
    InboxKeys.validateScope(scope);
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(policy, "policy");
    for (BatchItem<T> item : items) {
      InboxKeys.validateKey(Objects.requireNonNull(item, "batch item").key());
    }
    if (items.isEmpty()) {
      return new BatchResult<>(List.of());
    }
    for (int retry = 1; ; retry++) {
      try {
        return new BatchExecution<>(
                dataSource, claimer, failures, sql, settings, scope, items, policy, handler, atOnce)
            .run();
      } catch (SQLException e) {
        if (TransientFailures.isRetryable(e) && retry < MAX_BATCH_RETRIES) {
          log.debug("batch in scope '{}' hit {}; running it again", scope, e.getSQLState());
          continue;
        }
        throw new InboxDatabaseException(
            scope,
            null,
            "batch of "
                + items.size()
                + " failed; nothing of it was committed unless the commit itself failed",
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
      long start = System.nanoTime();
      Claim claim =
          claimer.claimInCallersTransaction(
              transaction, scope, new Claimer.Request(key, fingerprint));
      settings.listener().claimLatency(scope, Claimer.since(start));
      settings.listener().claimed(scope, claim.outcome(), 1);
      return claim;
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "claim on the caller's transaction failed", e);
    }
  }

  @Override
  public Claim claimAtStart(Connection transaction, String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try {
      requireTransaction(transaction);
      return claimFirst(
          transaction, scope, new Claimer.Request(key, fingerprint), null, RecordState.COMPLETED);
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "claim at the start of a transaction failed", e);
    }
  }

  /**
   * One key claimed by the first statement of a fresh transaction; a lock timeout answers
   * IN_PROGRESS and leaves the transaction aborted.
   */
  private Claim claimFirst(
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
      completeClaimed(transaction, claim, result);
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          claim.scope(), claim.key(), "complete on the caller's transaction failed", e);
    }
  }

  @Override
  public void completeAndCommit(Connection transaction, Claim claim, StoredResult result) {
    requireNew(claim);
    try {
      requireTransaction(transaction);
      requireCommittable(transaction);
      try (PreparedStatement ps = transaction.prepareStatement(sql.completeAndCommit)) {
        bindCompletion(transaction, ps, claim.scope(), claim.key(), claim.fencingToken(), result);
        // The guard raises an error unless exactly one row was completed; an error makes the
        // server skip the COMMIT that follows it in the same round trip.
        ps.execute();
      }
      // Ends the transaction on the driver's side too; the server has committed already.
      transaction.commit();
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          claim.scope(), claim.key(), "complete and commit of the caller's transaction failed", e);
    }
  }

  @Override
  public void recordFailure(Claim claim, String error) {
    requireNew(claim);
    failures.count(claim, claim.fingerprint(), error);
  }

  @Override
  public Reservation reserveAtStart(
      Connection transaction, String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Claimer.Request request = new Claimer.Request(key, fingerprint);
    try {
      requireTransaction(transaction);
      long start = System.nanoTime();
      Claimer.Reserved reserved = claimer.reserveAsFirstStatement(transaction, scope, request);
      Claim claim = reserved.claim();
      boolean recordDeferred = claim != null && claim.isNew();
      if (claim == null) {
        claim = claimRecordedKey(transaction, scope, request);
      }
      settings.listener().claimLatency(scope, Claimer.since(start));
      settings.listener().claimed(scope, claim.outcome(), 1);
      return new Reservation(claim, fingerprint, reserved.reservedAt(), recordDeferred);
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          scope, key, "reservation at the start of a transaction failed", e);
    }
  }

  /**
   * Claims, in a reservation's transaction, a key whose record can be claimed again; written
   * COMPLETED as {@link #claimAtStart} does. A lock timeout answers IN_PROGRESS and leaves the
   * transaction aborted.
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

  @Override
  public void complete(Connection transaction, Reservation reservation, StoredResult result) {
    if (!reservation.recordDeferred()) {
      complete(transaction, reservation.claim(), result);
      return;
    }
    requireNew(reservation.claim());
    try {
      requireCommittable(transaction);
      insertCompleted(transaction, sql.insertCompleted, reservation, result);
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          reservation.claim().scope(),
          reservation.claim().key(),
          "complete of a reservation on the caller's transaction failed",
          e);
    }
  }

  @Override
  public void completeAndCommit(
      Connection transaction, Reservation reservation, StoredResult result) {
    if (!reservation.recordDeferred()) {
      completeAndCommit(transaction, reservation.claim(), result);
      return;
    }
    requireNew(reservation.claim());
    try {
      requireTransaction(transaction);
      requireCommittable(transaction);
      insertCompleted(transaction, sql.insertCompletedAndCommit, reservation, result);
      // Ends the transaction on the driver's side too; the server has committed already.
      transaction.commit();
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          reservation.claim().scope(),
          reservation.claim().key(),
          "complete and commit of a reservation failed",
          e);
    }
  }

  /**
   * Inserts a reserved key's record, COMPLETED with its result. A record that another claimant
   * wrote first (committed: unique violation; still in flight past lockTimeout: lock timeout) means
   * the reservation is lost, and the error keeps the rest of the round trip, a COMMIT included,
   * from running.
   */
  private void insertCompleted(
      Connection transaction, String statement, Reservation reservation, StoredResult result)
      throws SQLException {
    Claim claim = reservation.claim();
    try (PreparedStatement ps = transaction.prepareStatement(statement)) {
      ps.setString(1, claim.scope());
      ps.setString(2, claim.key());
      ps.setBytes(3, reservation.fingerprint());
      Rows.setResult(transaction, ps, 4, result);
      ps.execute();
    } catch (SQLException e) {
      if (SqlStates.isUniqueViolation(e)) {
        throw new ReservationLostException(
            claim.scope(), claim.key(), "another claimant recorded the key first", e);
      }
      if (SqlStates.isLockTimeout(e)) {
        throw new ReservationLostException(
            claim.scope(),
            claim.key(),
            "another claimant's transaction wrote the key and was still open after lockTimeout",
            e);
      }
      throw e;
    }
  }

  @Override
  public void recordFailure(Reservation reservation, String error) {
    requireNew(reservation.claim());
    failures.count(reservation.claim(), reservation.fingerprint(), error);
  }

  @Override
  public Claim claimLease(String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    Connection connection = null;
    try {
      connection = Transactions.begin(dataSource);
      Claim claim =
          claimFirst(
              connection,
              scope,
              new Claimer.Request(key, fingerprint),
              settings.ownerId(),
              RecordState.IN_PROGRESS);
      // Only a NEW claim wrote anything; any other answer may come from an aborted transaction.
      if (claim.isNew()) {
        Transactions.commit(connection);
      } else {
        connection.rollback();
      }
      return claim;
    } catch (SQLException e) {
      if (connection != null) {
        Transactions.rollbackQuietly(connection, e, rollbackWait);
      }
      throw new InboxDatabaseException(scope, key, "leased claim failed", e);
    } finally {
      Transactions.endQuietly(connection);
    }
  }

  @Override
  public void complete(LeaseToken lease, StoredResult result) {
    Objects.requireNonNull(lease, "lease");
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.complete)) {
      bindCompletion(connection, ps, lease.scope(), lease.key(), lease.fencingToken(), result);
      if (ps.executeUpdate() != 1) {
        throw leaseRefused(connection, lease, StateMachine.Transition.COMPLETE);
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(lease.scope(), lease.key(), "complete of a lease failed", e);
    }
  }

  @Override
  public void fail(LeaseToken lease, String error) {
    Objects.requireNonNull(lease, "lease");
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.failLease)) {
      ps.setString(1, error);
      ps.setString(2, lease.scope());
      ps.setString(3, lease.key());
      ps.setLong(4, lease.fencingToken());
      if (ps.executeUpdate() != 1) {
        throw leaseRefused(connection, lease, StateMachine.Transition.FAIL);
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(lease.scope(), lease.key(), "fail of a lease failed", e);
    }
  }

  @Override
  public LeaseToken renew(LeaseToken lease) {
    Objects.requireNonNull(lease, "lease");
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.renewLease)) {
      ps.setString(1, settings.leaseDuration().toString());
      ps.setString(2, lease.scope());
      ps.setString(3, lease.key());
      ps.setLong(4, lease.fencingToken());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw leaseRefused(connection, lease, StateMachine.Transition.RENEW);
        }
        return new LeaseToken(
            lease.scope(),
            lease.key(),
            lease.owner(),
            lease.fencingToken(),
            Rows.instant(rs, "locked_until"));
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(lease.scope(), lease.key(), "renew of a lease failed", e);
    }
  }

  @Override
  public Optional<InboxRecord> find(String scope, String key) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try (Connection connection = dataSource.getConnection()) {
      return find(connection, scope, key);
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "find failed", e);
    }
  }

  @Override
  public Optional<Claim> lookup(String scope, String key, byte[] fingerprint) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try (Connection connection = dataSource.getConnection()) {
      return Optional.ofNullable(
          claimer.settled(connection, scope, new Claimer.Request(key, fingerprint)));
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "lookup failed", e);
    }
  }

  @Override
  public ReleaseResult release(String scope, String key) {
    InboxKeys.validateScope(scope);
    InboxKeys.validateKey(key);
    try (Connection connection = Transactions.autoCommitted(dataSource);
        PreparedStatement ps = connection.prepareStatement(sql.release)) {
      ps.setString(1, scope);
      ps.setString(2, key);
      if (ps.executeUpdate() == 1) {
        log.info("released key '{}' in scope '{}' for reprocessing", key, scope);
        return ReleaseResult.RELEASED;
      }
      return StateMachine.notReleased(
          find(connection, scope, key).map(InboxRecord::state).orElse(StateMachine.NO_RECORD));
    } catch (SQLException e) {
      throw new InboxDatabaseException(scope, key, "release failed", e);
    }
  }

  @Override
  public long purgeExpired() {
    long start = System.nanoTime();
    long total = 0;
    try (Connection connection = Transactions.autoCommitted(dataSource)) {
      for (String purge : List.of(sql.purge, sql.purgeCommittedWithoutComplete)) {
        try (PreparedStatement ps = connection.prepareStatement(purge)) {
          int deleted;
          do {
            ps.setString(1, settings.retention().toString());
            ps.setInt(2, settings.purgeBatchSize());
            deleted = ps.executeUpdate();
            total += deleted;
          } while (deleted == settings.purgeBatchSize());
        }
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          null, null, "purge of expired records failed after " + total + " rows", e);
    }
    settings.listener().purged(total, Claimer.since(start));
    return total;
  }

  @Override
  public void close() {
    if (janitor != null) {
      janitor.stop();
    }
  }

  private void janitorRun() {
    long purged = purgeExpired();
    if (purged > 0) {
      log.debug("purged {} expired records from {}", purged, settings.qualifiedTable());
    }
    try (Connection connection = dataSource.getConnection();
        PreparedStatement ps = connection.prepareStatement(sql.oldestInProgress);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      Instant oldest = Rows.instant(rs, "oldest");
      settings
          .listener()
          .oldestInProgress(
              oldest == null
                  ? Duration.ZERO
                  : Duration.between(oldest, Rows.instant(rs, "db_now")));
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          null, null, "reading the oldest IN_PROGRESS record failed", e);
    }
  }

  private void storeResult(Connection connection, Claim claim, StoredResult result)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.storeResult)) {
      Rows.setResult(connection, ps, 1, result);
      ps.setString(5, claim.scope());
      ps.setString(6, claim.key());
      int updated = ps.executeUpdate();
      if (updated != 1) {
        throw StateMachine.unexpectedRowCount(
            StateMachine.Transition.STORE_RESULT, claim.scope(), claim.key(), updated);
      }
    }
  }

  private void completeClaimed(Connection connection, Claim claim, StoredResult result)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.completeInTransaction)) {
      bindCompletion(connection, ps, claim.scope(), claim.key(), claim.fencingToken(), result);
      int updated = ps.executeUpdate();
      if (updated != 1) {
        throw StateMachine.unexpectedRowCount(
            StateMachine.Transition.COMPLETE, claim.scope(), claim.key(), updated);
      }
    }
  }

  /**
   * Binds {@link Statements#complete} or {@link Statements#completeInTransaction}: the result, then
   * which claim, by its fencing token.
   */
  private static void bindCompletion(
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

  /** Why a lease owner's write changed no row; {@link StateMachine#leaseRefused} explains. */
  private InboxException leaseRefused(
      Connection connection, LeaseToken lease, StateMachine.Transition transition)
      throws SQLException {
    return StateMachine.leaseRefused(
        transition,
        lease.scope(),
        lease.key(),
        lease.fencingToken(),
        find(connection, lease.scope(), lease.key()));
  }

  private Optional<InboxRecord> find(Connection connection, String scope, String key)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.find)) {
      ps.setString(1, scope);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(Rows.record(rs)) : Optional.empty();
      }
    }
  }

  private static void requireTransaction(Connection transaction) throws SQLException {
    if (transaction.getAutoCommit()) {
      throw new IllegalArgumentException(
          "claim(Connection, ...) needs a connection inside a transaction (autoCommit=false);"
              + " use execute(...) to let the inbox own the transaction");
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
