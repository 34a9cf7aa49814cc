package dev.inbox.internal;

import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.InboxSettings;
import dev.inbox.LeaseToken;
import dev.inbox.RecordState;
import dev.inbox.Storage;
import dev.inbox.StoredResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.postgresql.PGStatement;

/**
 * Claims keys on a connection that is inside a transaction.
 *
 * <p>Algorithm: one upsert claims every key it can and returns them ({@code NEW}); one SELECT reads
 * the rest and classifies them. The SELECT runs as its own statement so that, under READ COMMITTED,
 * it sees rows committed by the transactions the upsert waited for. A row that changed between the
 * two (purged, or released) is claimed again, at most {@value #ROUNDS} times.
 *
 * <p>First, though, one statement reads the keys as its snapshot sees them and inserts the absent
 * ones ({@link Statements#insertUnlessSeen}): one round trip, and no lock or write for a duplicate.
 * Only the keys that snapshot cannot settle take the path above.
 */
final class Claimer {
  private static final int ROUNDS = 5;

  /**
   * Sent in front of the batch claim at a transaction's start: keeps the transaction's {@code
   * enable_seqscan} in a setting of the inbox's own, then turns it off, so that the claim is
   * planned with its lookups on the primary key. Its plan is cached between executions (planning it
   * every time cost about a quarter of the claim), and a generic plan made while the table was
   * small would scan the whole table once per key after it has grown; with sequential scans off, no
   * plan of it ever does. The WHERE runs before the select list, so the keeping comes first.
   */
  private static final String PLAN_BY_INDEX =
      "SELECT set_config('enable_seqscan', 'off', true) WHERE set_config('inbox.enable_seqscan',"
          + " current_setting('enable_seqscan'), true) IS NOT NULL";

  /** Sent after the batch claim: the handler's statements plan as the transaction had it. */
  private static final String RESTORE_PLANNING =
      "SELECT set_config('enable_seqscan', current_setting('inbox.enable_seqscan'), true)";

  /** The savepoint around a claim in the caller's transaction; unlikely to clash with theirs. */
  private static final String CALLER_SAVEPOINT = "inbox_claim_savepoint";

  /**
   * Keeps the caller's lock_timeout, in a setting of the inbox's own, before the joined claim sets
   * the inbox's; a statement of its own, so that the keeping certainly comes first.
   */
  private static final String KEEP_CALLERS_LOCK_TIMEOUT =
      "SELECT set_config('inbox.caller_lock_timeout', current_setting('lock_timeout'), true)";

  private static final String RESTORE_CALLERS_LOCK_TIMEOUT =
      "SELECT set_config('lock_timeout', current_setting('inbox.caller_lock_timeout'), true)";

  /** One key to claim, with the fingerprint to check (null: no check). */
  record Request(String key, byte[] fingerprint) {}

  private final Statements sql;
  private final InboxSettings settings;

  /**
   * {@link #configureTransaction}'s statements, and the claim statements behind them, built once:
   * the driver looks its prepared statements up by their text.
   */
  private final String configuration;

  private final String configuredInsertUnlessSeen;
  private final String configuredInsertUnlessSeenMany;
  private final String configuredClaim;
  private final String configuredReserve;

  /** {@link #claimJoinedAtOnce}'s statements, built once. */
  private final String joinedInsertOrRead;

  Claimer(Statements sql, InboxSettings settings) {
    this.sql = sql;
    this.settings = settings;
    this.configuration =
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '"
            + settings.lockTimeout().toMillis()
            + "ms'";
    this.configuredInsertUnlessSeen = configuration + "; " + sql.insertUnlessSeen;
    this.configuredInsertUnlessSeenMany =
        configuration
            + "; "
            + PLAN_BY_INDEX
            + "; "
            + sql.insertUnlessSeenMany
            + "; "
            + RESTORE_PLANNING;
    this.configuredClaim = configuration + "; " + sql.claim;
    this.configuredReserve = configuration + "; " + sql.reserve;
    this.joinedInsertOrRead =
        "SAVEPOINT "
            + CALLER_SAVEPOINT
            + "; "
            + KEEP_CALLERS_LOCK_TIMEOUT
            + "; SET LOCAL lock_timeout = '"
            + settings.lockTimeout().toMillis()
            + "ms'; "
            + sql.insertOrRead
            + "; "
            + RESTORE_CALLERS_LOCK_TIMEOUT
            + "; RELEASE SAVEPOINT "
            + CALLER_SAVEPOINT;
  }

  /**
   * Must be the first statement of a transaction the inbox owns: makes it READ COMMITTED (the claim
   * relies on seeing rows committed by the transactions it waited for) and bounds how long its
   * claims wait on another claimant's row lock. One round trip for both.
   */
  void configureTransaction(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(configuration);
    }
  }

  /**
   * Claims distinct keys in one scope, writing new claims in {@code writtenAs}: {@code COMPLETED}
   * only for a transaction that commits solely when every handler succeeded. With a lease owner,
   * new claims get a lease ending {@code leaseDuration} after the transaction's start on the
   * database's clock.
   *
   * @throws SQLException with SQLState 55P03 when a key stayed locked past lockTimeout; the
   *     transaction is then aborted
   */
  Map<String, Claim> claim(
      Connection connection,
      String scope,
      List<Request> requests,
      String leaseOwner,
      RecordState writtenAs)
      throws SQLException {
    return claimRounds(connection, scope, requests, leaseOwner, writtenAs, false);
  }

  /**
   * {@link #configureTransaction} and {@link #claim(Connection, String, List, String, RecordState)}
   * in one round trip: the claim's statement carries the configuration. Only for a transaction the
   * inbox owns and that has run nothing yet.
   */
  Map<String, Claim> claimAsFirstStatement(
      Connection connection,
      String scope,
      List<Request> requests,
      String leaseOwner,
      RecordState writtenAs)
      throws SQLException {
    return claimRounds(connection, scope, requests, leaseOwner, writtenAs, true);
  }

  private Map<String, Claim> claimRounds(
      Connection connection,
      String scope,
      List<Request> requests,
      String leaseOwner,
      RecordState writtenAs,
      boolean configureFirst)
      throws SQLException {
    if (writtenAs == RecordState.FAILED
        || (writtenAs == RecordState.COMPLETED && leaseOwner != null)) {
      throw new IllegalArgumentException(
          "claims are written IN_PROGRESS, or COMPLETED without a lease, never " + writtenAs);
    }
    Map<String, Request> pending = new LinkedHashMap<>();
    requests.forEach(r -> pending.put(r.key(), r));
    Map<String, Claim> claims = new HashMap<>();
    String leaseDuration = leaseOwner == null ? null : settings.leaseDuration().toString();
    boolean configurationPending = configureFirst;
    if (configureFirst || pending.size() == 1) {
      try {
        takeFromSnapshot(
            connection,
            scope,
            pending,
            leaseOwner,
            leaseDuration,
            writtenAs,
            configureFirst,
            claims);
        if (pending.isEmpty()) {
          return claims;
        }
        configurationPending = false; // it went with the snapshot's statement
      } catch (SQLException e) {
        if (!configureFirst || !(SqlStates.isUniqueViolation(e) || isKeyInOtherGeneration(e))) {
          throw e;
        }
        // Another claimant committed a key after this transaction's snapshot. The transaction
        // has done nothing else: begin it again and take the full path, which classifies it.
        connection.rollback();
      }
    }
    int takenOver = 0;
    for (int round = 0; round < ROUNDS && !pending.isEmpty(); round++) {
      boolean configure = configurationPending && round == 0;
      takenOver +=
          upsert(
              connection, scope, pending, leaseOwner, leaseDuration, writtenAs, claims, configure);
      if (!pending.isEmpty()) {
        classify(connection, scope, pending, claims);
      }
    }
    if (!pending.isEmpty()) {
      throw new IllegalStateException(
          "keys "
              + pending.keySet()
              + " could be neither claimed nor classified in scope '"
              + scope
              + "' after "
              + ROUNDS
              + " rounds, which indicates a bug");
    }
    if (takenOver > 0) {
      settings.listener().leasesTakenOver(scope, takenOver);
    }
    return claims;
  }

  /**
   * On the partitioned storage, the key guard's serialization failure: the key was committed in
   * another generation after the snapshot, the partitioned form of the plain table's unique
   * violation.
   */
  boolean isKeyInOtherGeneration(SQLException e) {
    return settings.storage() == Storage.PARTITIONED
        && SqlStates.SERIALIZATION_FAILURE.equals(e.getSQLState());
  }

  /**
   * {@link #configureTransaction} and {@link Statements#reserve} in one round trip, as the first
   * statement of a fresh transaction. Returns NEW when the key has no row and this transaction took
   * its advisory lock (nothing is written: the completion inserts the row), IN_PROGRESS with {@code
   * lockHeldElsewhere} when another transaction holds the lock, the settled answer of a row, or a
   * null claim when the row can be claimed again (a failed key below maxAttempts, an expired
   * lease): the caller then claims it with {@link #claim} in this same transaction.
   */
  Reserved reserveAsFirstStatement(Connection connection, String scope, Request request)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(configuredReserve)) {
      ps.setString(1, scope);
      ps.setString(2, request.key());
      ps.setString(3, sql.reservationLockName(scope, request.key()));
      ps.setString(4, scope);
      ps.setString(5, request.key());
      ps.execute();
      Boolean reserved;
      try (ResultSet lock = currentResultSet(ps)) {
        if (!lock.next()) {
          throw new IllegalStateException(
              "the reservation's lock returned no row, which indicates a bug");
        }
        reserved = (Boolean) lock.getObject("reserved");
      }
      ps.getMoreResults();
      return reservedFrom(ps, scope, request, reserved);
    }
  }

  /**
   * After {@link #reserveAsFirstStatement} found the key's lock held by another transaction: waits
   * for that lock, at most lockTimeout (then SQLState 55P03, and the transaction is aborted), and
   * reads the record that transaction left, if any, with a snapshot taken after the wait.
   */
  Reserved waitForReservation(Connection connection, String scope, Request request)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql.waitForReservation)) {
      ps.setString(1, sql.reservationLockName(scope, request.key()));
      ps.setString(2, scope);
      ps.setString(3, request.key());
      ps.execute();
      ps.getMoreResults();
      return reservedFrom(ps, scope, request, true);
    }
  }

  /** Reads the reservation's record, which decides wherever there is one; else the lock does. */
  private Reserved reservedFrom(
      PreparedStatement ps, String scope, Request request, Boolean lockTaken) throws SQLException {
    try (ResultSet rs = currentResultSet(ps)) {
      if (!rs.next()) {
        throw new IllegalStateException(
            "the reservation's read returned no row, which indicates a bug");
      }
      if (Rows.state(rs) != StateMachine.NO_RECORD) {
        return new Reserved(classifyRow(scope, request, rs), false);
      }
      if (Boolean.TRUE.equals(lockTaken)) {
        return new Reserved(newClaim(scope, request, null, 1, 1, null), false);
      }
      // No row, and the lock is held elsewhere (false), or was not tried because a row seen
      // before it is gone now, released or purged (null): the caller waits for the lock.
      return new Reserved(lockedElsewhere(scope, request.key()), true);
    }
  }

  /**
   * What a reservation found: the claim (null: the row can be claimed again), and whether another
   * transaction held the key's lock.
   */
  record Reserved(Claim claim, boolean lockHeldElsewhere) {}

  /**
   * Claims one key under a savepoint, so that a lock timeout answers IN_PROGRESS instead of
   * aborting the caller's transaction.
   */
  Claim claimUnderSavepoint(
      Connection connection,
      String scope,
      Request request,
      String leaseOwner,
      RecordState writtenAs)
      throws SQLException {
    Savepoint savepoint = connection.setSavepoint();
    try {
      Claim claim =
          claim(connection, scope, List.of(request), leaseOwner, writtenAs).get(request.key());
      connection.releaseSavepoint(savepoint);
      return claim;
    } catch (SQLException e) {
      connection.rollback(savepoint);
      if (SqlStates.isLockTimeout(e)) {
        return lockedElsewhere(scope, request.key());
      }
      throw e;
    }
  }

  /**
   * Claims one key in a transaction the caller owns, under the inbox's lock timeout and a
   * savepoint, so that a lock timeout answers IN_PROGRESS and leaves the caller's transaction and
   * its own lock_timeout as they were. A new key or a settled one is answered in one round trip
   * ({@link #claimJoinedAtOnce}); the rare rest takes {@link #claimJoinedStepByStep}.
   *
   * <p>A new claim is written COMPLETED: no other transaction sees it before the caller's commits,
   * and what commits with it is the work done, whether or not the caller completes it (the key then
   * answers DUPLICATE, as {@code Inbox#claim} documents). A rollback takes it away with the work.
   * So a completion without a result writes nothing and costs no round trip.
   */
  Claim claimInCallersTransaction(Connection connection, String scope, Request request)
      throws SQLException {
    Claim claim;
    try {
      claim = claimJoinedAtOnce(connection, scope, request);
    } catch (SQLException e) {
      if (!SqlStates.SERIALIZATION_FAILURE.equals(e.getSQLState())) {
        throw e;
      }
      // The partitioned storage's key guard found the key committed in another generation while
      // this claim waited for its lock (docs/scale.md, Limits). The savepoint is rolled back, so
      // the caller's transaction goes on; a new statement's snapshot sees that row and reads it.
      claim = claimJoinedAtOnce(connection, scope, request);
    }
    return claim != null ? claim : claimJoinedStepByStep(connection, scope, request);
  }

  /**
   * One round trip: the savepoint, the caller's lock_timeout kept and the inbox's set, {@link
   * Statements#insertOrRead}, the caller's lock_timeout set back and the savepoint released. After
   * an error PostgreSQL skips the statements behind it, and the rollback to the savepoint (which
   * also restores the caller's lock_timeout) and its release take one more. Returns null, having
   * written nothing, when the snapshot could not settle the key (a row committed after it, a failed
   * key to retry, a lease to take over).
   */
  private Claim claimJoinedAtOnce(Connection connection, String scope, Request request)
      throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(joinedInsertOrRead)) {
      bindInsertOrRead(ps, 1, scope, request, null, null, RecordState.COMPLETED);
      try {
        ps.execute();
      } catch (SQLException e) {
        if (SqlStates.IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
          throw e; // the caller's transaction was aborted before: no savepoint was taken
        }
        return afterFailedJoinedClaim(connection, scope, request, e);
      }
      currentResultSet(ps).close(); // KEEP_CALLERS_LOCK_TIMEOUT's row
      ps.getMoreResults();
      Map<String, Request> pending = new HashMap<>(Map.of(request.key(), request));
      Map<String, Claim> claims = new HashMap<>();
      try (ResultSet rs = currentResultSet(ps)) {
        takeAnswers(rs, scope, pending, null, claims);
      }
      return claims.get(request.key());
    }
  }

  /**
   * Three round trips: the savepoint with the lock timeout set inside it (rolling back to the
   * savepoint restores the caller's), the claim's rounds, and the release with the caller's lock
   * timeout set back.
   */
  private Claim claimJoinedStepByStep(Connection connection, String scope, Request request)
      throws SQLException {
    try {
      return claimUnderJoinedSavepoint(connection, scope, List.of(request)).get(request.key());
    } catch (SQLException e) {
      if (SqlStates.isLockTimeout(e)) {
        return lockedElsewhere(scope, request.key());
      }
      throw e;
    }
  }

  /**
   * Claims distinct keys in a transaction the caller owns, as {@link #claimInCallersTransaction}
   * claims one, all under one savepoint and the inbox's lock timeout: three round trips whatever
   * their number (the savepoint with the lock timeout, the claim's rounds, the release with the
   * caller's lock timeout set back), where one key at a time costs one each. When a key stays
   * locked past the lock timeout (or, partitioned, turns up committed in another generation), all
   * are rolled back to the savepoint and claimed one at a time, so that the held key answers
   * IN_PROGRESS and the others are claimed. The caller's transaction and lock_timeout are as they
   * were either way.
   */
  Map<String, Claim> claimAllInCallersTransaction(
      Connection connection, String scope, List<Request> requests) throws SQLException {
    if (requests.size() == 1) {
      Request request = requests.get(0);
      return Map.of(request.key(), claimInCallersTransaction(connection, scope, request));
    }
    try {
      return claimUnderJoinedSavepoint(connection, scope, requests);
    } catch (SQLException e) {
      if (!SqlStates.isLockTimeout(e) && !isKeyInOtherGeneration(e)) {
        throw e;
      }
    }
    Map<String, Claim> claims = new HashMap<>();
    for (Request request : requests) {
      claims.put(request.key(), claimInCallersTransaction(connection, scope, request));
    }
    return claims;
  }

  /**
   * The claim's rounds on a caller's transaction, under the joined savepoint and the inbox's lock
   * timeout; new claims are written COMPLETED. On failure, rolled back to the savepoint (the
   * caller's transaction and lock_timeout as they were) and thrown.
   */
  private Map<String, Claim> claimUnderJoinedSavepoint(
      Connection connection, String scope, List<Request> requests) throws SQLException {
    String callersLockTimeout = joinedSavepoint(connection);
    try {
      Map<String, Claim> claims = claim(connection, scope, requests, null, RecordState.COMPLETED);
      releaseJoinedSavepoint(connection, callersLockTimeout);
      return claims;
    } catch (SQLException e) {
      rollBackJoinedSavepoint(connection, e);
      throw e;
    }
  }

  /**
   * Takes the joined claim's savepoint and sets the inbox's lock timeout inside it (rolling back to
   * the savepoint restores the caller's), in one round trip; returns the caller's lock timeout.
   */
  String joinedSavepoint(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "SAVEPOINT "
              + CALLER_SAVEPOINT
              + "; SELECT current_setting('lock_timeout'), set_config('lock_timeout', '"
              + settings.lockTimeout().toMillis()
              + "ms', true)");
      try (ResultSet rs = currentResultSet(statement)) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  /** Releases the joined claim's savepoint and sets the caller's lock timeout back. */
  static void releaseJoinedSavepoint(Connection connection, String callersLockTimeout)
      throws SQLException {
    try (PreparedStatement release =
        connection.prepareStatement(
            "RELEASE SAVEPOINT "
                + CALLER_SAVEPOINT
                + "; SELECT set_config('lock_timeout', ?, true)")) {
      release.setString(1, callersLockTimeout);
      release.execute();
    }
  }

  /**
   * Rolls back to the joined claim's savepoint and releases it, in one round trip: the caller's
   * transaction and lock_timeout are as they were. A failed rollback is suppressed in {@code
   * failure}, which is then thrown.
   */
  static void rollBackJoinedSavepoint(Connection connection, SQLException failure)
      throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "ROLLBACK TO SAVEPOINT " + CALLER_SAVEPOINT + "; RELEASE SAVEPOINT " + CALLER_SAVEPOINT);
    } catch (SQLException e) {
      failure.addSuppressed(e);
      throw failure;
    }
  }

  /**
   * After a failed one-round-trip joined claim (its savepoint still taken): rolls back to the
   * savepoint. A lock timeout answers IN_PROGRESS; any other failure is thrown.
   */
  private Claim afterFailedJoinedClaim(
      Connection connection, String scope, Request request, SQLException failure)
      throws SQLException {
    rollBackJoinedSavepoint(connection, failure);
    if (SqlStates.isLockTimeout(failure)) {
      return lockedElsewhere(scope, request.key());
    }
    throw failure;
  }

  /**
   * Sets the inbox's lock timeout on a caller's transaction until its end or the rollback of the
   * savepoint taken before, and returns the caller's, for {@link #restoreLockTimeout}.
   */
  String setLockTimeout(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', '"
                    + settings.lockTimeout().toMillis()
                    + "ms', true)")) {
      rs.next();
      return rs.getString(1);
    }
  }

  void restoreLockTimeout(Connection connection, String callersLockTimeout) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
      ps.setString(1, callersLockTimeout);
      ps.execute();
    }
  }

  /** The current result set of a multi-statement execution, past any update counts. */
  private static ResultSet currentResultSet(Statement statement) throws SQLException {
    ResultSet rs = statement.getResultSet();
    while (rs == null) {
      if (!statement.getMoreResults() && statement.getUpdateCount() == -1) {
        throw new IllegalStateException("the statement returned no rows, which indicates a bug");
      }
      rs = statement.getResultSet();
    }
    return rs;
  }

  /** The answer a claim would give for a settled key, or null when a claim could be NEW. */
  Claim settled(Connection connection, String scope, Request request) throws SQLException {
    return settledEach(connection, scope, List.of(request)).get(0);
  }

  /**
   * For each request on its own, the answer a claim would give if its key is settled, or null where
   * a claim could be NEW; several requests may share a key. One read of the keys' rows, with no
   * lock and no write; a row this transaction wrote is read as it now stands.
   */
  List<Claim> settledEach(Connection connection, String scope, List<Request> requests)
      throws SQLException {
    Map<String, List<Integer>> byKey = new LinkedHashMap<>();
    for (int i = 0; i < requests.size(); i++) {
      byKey.computeIfAbsent(requests.get(i).key(), k -> new ArrayList<>()).add(i);
    }
    List<Claim> answers = new ArrayList<>(Collections.nCopies(requests.size(), null));
    try (PreparedStatement ps = connection.prepareStatement(sql.selectClaimState)) {
      planEveryTime(ps);
      ps.setString(1, scope);
      ps.setArray(2, connection.createArrayOf("text", byKey.keySet().toArray(new String[0])));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          for (int i : byKey.get(rs.getString("key"))) {
            answers.set(i, classifyRow(scope, requests.get(i), rs));
          }
        }
      }
    }
    return answers;
  }

  /** The answer when another transaction held the key past lockTimeout. */
  Claim lockedElsewhere(String scope, String key) {
    return new Claim(scope, key, ClaimOutcome.IN_PROGRESS, 0, 0, null, null, null);
  }

  private int upsert(
      Connection connection,
      String scope,
      Map<String, Request> pending,
      String leaseOwner,
      String leaseDuration,
      RecordState writtenAs,
      Map<String, Claim> claims,
      boolean configure)
      throws SQLException {
    String[] keys = pending.keySet().toArray(new String[0]);
    byte[][] fingerprints = fingerprintsOf(keys, pending);
    int takenOver = 0;
    String statement = configure ? configuredClaim : sql.claim;
    try (PreparedStatement ps = connection.prepareStatement(statement)) {
      ps.setString(1, scope);
      int next = bindNewRowValues(ps, 2, leaseOwner, leaseDuration, writtenAs);
      ps.setArray(next++, connection.createArrayOf("text", keys));
      ps.setArray(next++, connection.createArrayOf("bytea", fingerprints));
      // The guards of RETRY and TAKE_OVER, in that order, each bound to maxAttempts.
      ps.setInt(next++, settings.maxAttempts());
      ps.setInt(next, settings.maxAttempts());
      ps.execute();
      try (ResultSet rs = currentResultSet(ps)) {
        while (rs.next()) {
          String key = rs.getString(1);
          int attempts = rs.getInt(2);
          long token = rs.getLong(3);
          Instant lockedUntil = Rows.instant(rs, "locked_until");
          if (rs.getBoolean(5)) {
            takenOver++;
          }
          Request request = pending.remove(key);
          if (request == null) {
            throw new IllegalStateException(
                "claim returned key '" + key + "' twice or unasked, which indicates a bug");
          }
          claims.put(key, newClaim(scope, request, leaseOwner, attempts, token, lockedUntil));
        }
      }
    }
    return takenOver;
  }

  /**
   * Claims the new keys and settles the seen ones in one round trip, from one snapshot, with no
   * lock and no write for a key already there. Removes from {@code pending} every key it answered;
   * what is left needs the full claim (a row committed after the snapshot, a failed key below
   * maxAttempts, an expired lease). As the first statement of a fresh transaction ({@code
   * configure}) it inserts with a plain INSERT, which throws a unique violation where the other
   * form leaves the key pending; only a single key has that other form.
   */
  private void takeFromSnapshot(
      Connection connection,
      String scope,
      Map<String, Request> pending,
      String leaseOwner,
      String leaseDuration,
      RecordState writtenAs,
      boolean configure,
      Map<String, Claim> claims)
      throws SQLException {
    boolean single = pending.size() == 1;
    String statement =
        single
            ? (configure ? configuredInsertUnlessSeen : sql.insertOrRead)
            : (configure ? configuredInsertUnlessSeenMany : sql.insertUnlessSeenMany);
    String[] keys = pending.keySet().toArray(new String[0]);
    try (PreparedStatement ps = connection.prepareStatement(statement)) {
      if (single) {
        bindInsertOrRead(ps, 1, scope, pending.get(keys[0]), leaseOwner, leaseDuration, writtenAs);
      } else {
        if (!configure) {
          planEveryTime(ps);
        }
        int next = 1;
        ps.setArray(next++, connection.createArrayOf("text", keys));
        ps.setString(next++, scope);
        ps.setString(next++, scope);
        next = bindNewRowValues(ps, next, leaseOwner, leaseDuration, writtenAs);
        ps.setArray(next++, connection.createArrayOf("text", keys));
        ps.setArray(next, connection.createArrayOf("bytea", fingerprintsOf(keys, pending)));
      }
      ps.execute();
      if (configure && !single) {
        currentResultSet(ps).close(); // PLAN_BY_INDEX's row
        ps.getMoreResults();
      }
      try (ResultSet rs = currentResultSet(ps)) {
        takeAnswers(rs, scope, pending, leaseOwner, claims);
      }
    }
  }

  /**
   * Binds {@link Statements#insertOrRead} or {@link Statements#insertUnlessSeen} for one key from
   * {@code index} on: scope and key of the read, then scope, key and fingerprint of the new row and
   * its values.
   */
  private static void bindInsertOrRead(
      PreparedStatement ps,
      int index,
      String scope,
      Request request,
      String leaseOwner,
      String leaseDuration,
      RecordState writtenAs)
      throws SQLException {
    ps.setString(index, scope);
    ps.setString(index + 1, request.key());
    ps.setString(index + 2, scope);
    ps.setString(index + 3, request.key());
    ps.setBytes(index + 4, request.fingerprint());
    bindNewRowValues(ps, index + 5, leaseOwner, leaseDuration, writtenAs);
  }

  /**
   * Reads the answers of a snapshot's claim ({@link Statements#insertOrRead} and its kin): each key
   * inserted or settled goes from {@code pending} to {@code claims}.
   */
  private void takeAnswers(
      ResultSet rs,
      String scope,
      Map<String, Request> pending,
      String leaseOwner,
      Map<String, Claim> claims)
      throws SQLException {
    while (rs.next()) {
      String key = rs.getString("key");
      Request request = pending.get(key);
      if (request == null) {
        throw new IllegalStateException(
            "claim returned key '" + key + "' twice or unasked, which indicates a bug");
      }
      Claim claim =
          rs.getBoolean("inserted")
              ? newClaim(scope, request, leaseOwner, 1, 1, Rows.instant(rs, "locked_until"))
              : classifyRow(scope, request, rs);
      if (claim != null) {
        claims.put(key, claim);
        pending.remove(key);
      }
    }
  }

  /**
   * Binds the parameters of a new row's values ({@code NEW_ROW_VALUES} in {@link Statements}) from
   * {@code index} on; returns the next index. The lease's duration is bound as text for its {@code
   * ::interval} cast, so that a null one has a type too: a parameter with no type makes pgjdbc
   * describe the statement once and from then on send it only after a Sync of everything queued
   * before it (its guard against a full receive buffer), which for a claim sent behind the
   * transaction's settings costs a whole extra round trip.
   */
  private static int bindNewRowValues(
      PreparedStatement ps,
      int index,
      String leaseOwner,
      String leaseDuration,
      RecordState writtenAs)
      throws SQLException {
    ps.setString(index, writtenAs.name());
    ps.setString(index + 1, leaseOwner);
    ps.setString(index + 2, leaseDuration);
    ps.setString(index + 3, writtenAs.name());
    return index + 4;
  }

  /** The fingerprints of the pending requests, in the order of {@code keys}. */
  private static byte[][] fingerprintsOf(String[] keys, Map<String, Request> pending) {
    byte[][] fingerprints = new byte[keys.length][];
    for (int i = 0; i < keys.length; i++) {
      fingerprints[i] = pending.get(keys[i]).fingerprint();
    }
    return fingerprints;
  }

  /** A claim this transaction now owns, with its lease when it has a lease owner. */
  private static Claim newClaim(
      String scope,
      Request request,
      String leaseOwner,
      int attempts,
      long fencingToken,
      Instant lockedUntil) {
    String key = request.key();
    LeaseToken lease =
        leaseOwner == null
            ? null
            : new LeaseToken(scope, key, leaseOwner, fencingToken, lockedUntil);
    return new Claim(
        scope,
        key,
        ClaimOutcome.NEW,
        attempts,
        fencingToken,
        null,
        lockedUntil,
        lease,
        request.fingerprint());
  }

  private void classify(
      Connection connection, String scope, Map<String, Request> pending, Map<String, Claim> claims)
      throws SQLException {
    List<Request> requests = new ArrayList<>(pending.values());
    List<Claim> answers = settledEach(connection, scope, requests);
    for (int i = 0; i < requests.size(); i++) {
      if (answers.get(i) != null) {
        claims.put(requests.get(i).key(), answers.get(i));
        pending.remove(requests.get(i).key());
      }
    }
  }

  /**
   * The claim a row that the upsert left alone stands for, or null when it is claimable after all;
   * {@link StateMachine#classify} decides.
   */
  private Claim classifyRow(String scope, Request request, ResultSet rs) throws SQLException {
    ClaimOutcome outcome =
        StateMachine.classify(
            Rows.state(rs),
            rs.getInt("attempts"),
            Fingerprints.mismatch(rs.getBytes("fingerprint"), request.fingerprint()),
            Rows.leaseLive(rs),
            settings.maxAttempts());
    switch (outcome) {
      case NEW:
        return null;
      case DUPLICATE:
        return settled(scope, request, outcome, rs, Rows.result(rs), null);
      case IN_PROGRESS:
        return settled(scope, request, outcome, rs, null, Rows.instant(rs, "locked_until"));
      default:
        return settled(scope, request, outcome, rs, null, null);
    }
  }

  /** The answer of a claim that found the key's row settled. */
  private static Claim settled(
      String scope,
      Request request,
      ClaimOutcome outcome,
      ResultSet rs,
      StoredResult result,
      Instant lockedUntil)
      throws SQLException {
    return new Claim(
        scope,
        request.key(),
        outcome,
        rs.getInt("attempts"),
        rs.getLong("fencing_token"),
        result,
        lockedUntil,
        null,
        request.fingerprint());
  }

  /**
   * A cached generic plan made while the table was small keeps a sequential scan after the table
   * has grown (until autovacuum re-plans it); planned per execution, the lookup always uses the
   * primary key.
   */
  private static void planEveryTime(PreparedStatement ps) throws SQLException {
    if (ps.isWrapperFor(PGStatement.class)) {
      ps.unwrap(PGStatement.class).setPrepareThreshold(0);
    }
  }

  /** Distinct requests in order of first appearance. */
  static List<Request> distinct(List<Request> requests) {
    Map<String, Request> seen = new LinkedHashMap<>();
    requests.forEach(r -> seen.putIfAbsent(r.key(), r));
    return new ArrayList<>(seen.values());
  }

  static Duration since(long startNanos) {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }
}
