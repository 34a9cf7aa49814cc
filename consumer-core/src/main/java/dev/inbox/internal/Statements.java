package dev.inbox.internal;

import dev.inbox.InboxSettings;

/**
 * Every SQL statement of the inbox, built once per table. The table's name is validated and quoted;
 * every value is a bind parameter.
 *
 * <p>Every time written or compared is the database's: {@code now()}, the start of the statement's
 * transaction, and durations are bound as intervals. Nodes whose clocks disagree then agree on who
 * owns a lease and what may be purged. Within a transaction {@code now()} stands still, so the
 * claim's upsert and its classification of the rest judge a lease by the same instant.
 */
final class Statements {
  static final String TAKEOVER_NOTE = "lease expired: ";
  private static final String COLUMNS =
      "scope, key, fingerprint, state, attempts, lease_owner, fencing_token, locked_until,"
          + " result_status, result_headers, result_body, result_body_sha256, last_error,"
          + " created_at, updated_at, completed_at";

  /** Whether a row's lease runs on, by the database's clock: null for a row without one. */
  private static final String LEASE_LIVE = "locked_until >= now() AS lease_live";

  private static final String SEEN_COLUMNS =
      "key, state, attempts, fingerprint, fencing_token, locked_until, "
          + LEASE_LIVE
          + ", result_status, result_headers, result_body, result_body_sha256";

  /**
   * The values of a new row after its key and fingerprint: state, attempts, lease owner, fencing
   * token, lease end and the three times. Parameters: the state, the lease owner, the lease's
   * duration as an interval (null: no lease), and the state again, for completed_at.
   */
  private static final String NEW_ROW_VALUES =
      "?, 1, ?::text, 1, now() + ?::interval, now(), now(),"
          + " CASE ?::text WHEN 'COMPLETED' THEN now() END";

  private static final String NEW_ROW_COLUMNS =
      " (scope, key, fingerprint, state, attempts, lease_owner, fencing_token, locked_until,"
          + " created_at, updated_at, completed_at)";

  private static final String INSERTED_AND_SEEN =
      " RETURNING key, state, attempts, fingerprint, fencing_token, locked_until)"
          + " SELECT true AS inserted, key, state, attempts, fingerprint, fencing_token,"
          + " locked_until, NULL::boolean AS lease_live, NULL::integer AS result_status,"
          + " NULL::text[] AS result_headers,"
          + " NULL::bytea AS result_body, NULL::bytea AS result_body_sha256 FROM inserted"
          + " UNION ALL SELECT false, * FROM seen";

  /**
   * Claims many keys in one round trip, writing them as IN_PROGRESS, or directly as COMPLETED when
   * the caller's transaction will only commit if every handler succeeds (no other transaction can
   * see the row before then, so the IN_PROGRESS step would be an extra write nobody could observe).
   * A new key is inserted; a FAILED key below maxAttempts, or an IN_PROGRESS key below maxAttempts
   * whose lease expired, is taken over with a new fencing token. A committed IN_PROGRESS row
   * without a lease is never taken over: it is a caller's transaction that committed its effect
   * without {@code complete()}, so the key counts as completed. Each takeover counts as an attempt,
   * so that a message that kills its worker every time gives up like one that fails. Rows sorted by
   * key, so that two batches lock in the same order and cannot deadlock. Returns only the keys this
   * statement now owns.
   */
  final String claim;

  /**
   * Claims one key the cheap way: reads its row as the statement's snapshot sees it, with no lock
   * and no write, and inserts the key only if there is none. A duplicate or a new key is answered
   * in this one round trip; the rare rest (a row committed after the snapshot, a failed key to
   * retry, an expired lease) goes on to {@link #claim}. Returns the inserted row with {@code
   * inserted} true, or the row that was there with {@code inserted} false. The read is an equality
   * on the whole primary key, so even a generic plan cached while the table was empty uses the
   * index.
   */
  final String insertOrRead;

  /**
   * Like {@link #insertOrRead}, but a plain INSERT where the snapshot shows no row, cheaper for the
   * database than a speculative insertion (benchmarks/README.md has the pgbench figures). A row
   * committed after the snapshot, or by a transaction the INSERT waited for, makes it fail with a
   * unique violation (23505) that aborts the transaction, so it is only for the first statement of
   * a transaction that can be rolled back and claimed again. PostgreSQL logs that error; it happens
   * only when two claimants race for a new key.
   */
  final String insertUnlessSeen;

  /** {@link #insertUnlessSeen} for many keys in one round trip. */
  final String insertUnlessSeenMany;

  /**
   * Reads the keys the claim did not return, to tell duplicates, live claims and give-ups apart.
   */
  final String selectClaimState;

  final String complete;

  /**
   * {@link #complete} for a claim made on the caller's transaction: an {@code IN_PROGRESS} row, or
   * a row that this very transaction inserted as {@code COMPLETED} ({@code claimAtStart}, whose
   * uncommitted row nobody else can see in either state). For the latter, only the result and
   * {@code updated_at} change, and no indexed column or partial-index predicate does, so that the
   * update can be HOT: no new index entries. The {@code xmin} test keeps a stale claim from
   * overwriting a row that an earlier transaction completed.
   */
  final String completeInTransaction;

  /**
   * {@link #complete} and COMMIT in one round trip. The SELECT turns "not exactly one row
   * completed" into an error (a cast that fails, naming the count), and the server skips the rest
   * of a round trip after an error, so the COMMIT then never runs. The failing cast depends on the
   * count, so the planner cannot fold it into an error at planning time.
   */
  final String completeAndCommit;

  /** Adds the result to a row the optimistic claim already wrote as COMPLETED; a HOT update. */
  final String storeResult;

  /**
   * Reserves one key, writing nothing, in two statements sent in one round trip. The first tries
   * the key's transaction-level advisory lock where its snapshot shows no row ({@code reserved}:
   * true when taken, false when another transaction holds it, null when there was a row). The
   * second reads the row with a snapshot taken after that: the record decides wherever there is
   * one. A single statement's read comes from a snapshot taken before its lock: a first reservation
   * committing between the two showed no row and then a free lock, so a key already done answered
   * NEW (PostgreSQL makes a commit visible before it releases the transaction's locks, so a read
   * after the lock always sees the record of the reservation that held it). Parameters: scope and
   * key, the lock's name ({@link #reservationLockName}), then scope and key again.
   */
  final String reserve;

  /**
   * Waits for a key's advisory lock that another reservation holds, under the transaction's
   * lock_timeout, then reads the row as {@link #reserve}'s second statement does. Parameters: the
   * lock's name, then scope and key.
   */
  final String waitForReservation;

  /**
   * The record of a reserved key, inserted whole and COMPLETED with its result. A row that another
   * claimant committed meanwhile makes it fail with a unique violation. Parameters: scope, key,
   * fingerprint and the result (four). Its created_at is the transaction's start, which is when the
   * key was reserved.
   */
  final String insertCompleted;

  /**
   * {@link #insertCompleted} and COMMIT in one round trip: the server skips the COMMIT after an
   * error, so a lost reservation commits nothing.
   */
  final String insertCompletedAndCommit;

  /** Names the table in the reservations' advisory lock names; see {@link #reservationLockName}. */
  private final String lockNamespace;

  final String completeMany;
  final String failInTransaction;
  final String recordFailure;
  final String failLease;
  final String renewLease;
  final String release;
  final String find;
  final String purge;

  /**
   * {@link #purge} for the rows of caller's transactions that committed a claim without {@code
   * complete()}: IN_PROGRESS without a lease, which count as completed when they were last written.
   */
  final String purgeCommittedWithoutComplete;

  /** The oldest live or expired lease; an IN_PROGRESS row without one counts as completed. */
  final String oldestInProgress;

  /**
   * The row of one key as the statement's snapshot sees it, read once, and the key inserted only if
   * there is none. Parameters: scope and key of the read, then scope, key and fingerprint of the
   * new row and its {@link #NEW_ROW_VALUES}.
   */
  private static String insertOrRead(String table, String onConflict) {
    return "WITH seen AS (SELECT "
        + SEEN_COLUMNS
        + " FROM "
        + table
        + " WHERE scope = ? AND key = ?),"
        + " inserted AS (INSERT INTO "
        + table
        + NEW_ROW_COLUMNS
        + " SELECT ?, ?, ?, "
        + NEW_ROW_VALUES
        + " WHERE NOT EXISTS (SELECT 1 FROM seen)"
        + onConflict
        + INSERTED_AND_SEEN;
  }

  /**
   * {@link #insertUnlessSeen} for many keys. Parameters: the keys and the scope of the read, then
   * the scope and {@link #NEW_ROW_VALUES} of the new rows, then their keys and fingerprints as two
   * arrays. New keys are inserted in key order, so that two batches wait for each other in one
   * order and cannot deadlock.
   *
   * <p>The read looks each key up on its own ({@code LATERAL ... LIMIT 1}, which the planner cannot
   * turn into a join): {@code key = ANY(?)} let the planner scan a table of some thousand rows
   * instead, comparing every row with the whole array, which cost more than the rest of the claim.
   * Still planned with its parameters every time, since a generic plan made on an empty table could
   * scan it per key.
   */
  private static String insertUnlessSeenMany(String table) {
    return "WITH seen AS (SELECT s.* FROM unnest(?::text[]) AS q(k) CROSS JOIN LATERAL (SELECT "
        + SEEN_COLUMNS
        + " FROM "
        + table
        + " WHERE scope = ? AND key = q.k LIMIT 1) s),"
        + " inserted AS (INSERT INTO "
        + table
        + NEW_ROW_COLUMNS
        + " SELECT ?, u.k, u.f, "
        + NEW_ROW_VALUES
        + " FROM unnest(?::text[], ?::bytea[]) AS u(k, f)"
        + " WHERE NOT EXISTS (SELECT 1 FROM seen WHERE seen.key = u.k) ORDER BY u.k"
        + INSERTED_AND_SEEN;
  }

  Statements(InboxSettings settings) {
    String table = settings.qualifiedTable();
    // Unquoted, the name every release has hashed: nodes running different versions must take
    // one lock per key.
    this.lockNamespace = settings.schema() + "." + settings.table();
    claim =
        "INSERT INTO "
            + table
            + " AS r (scope, key, fingerprint, state, attempts, lease_owner, fencing_token,"
            + " locked_until, created_at, updated_at, completed_at)"
            + " SELECT ?, u.k, u.f, "
            + NEW_ROW_VALUES
            + " FROM unnest(?::text[], ?::bytea[]) AS u(k, f) ORDER BY u.k"
            + " ON CONFLICT (scope, key) DO UPDATE SET state = EXCLUDED.state,"
            + " completed_at = EXCLUDED.completed_at,"
            + " attempts = r.attempts + 1, fencing_token = r.fencing_token + 1,"
            + " lease_owner = EXCLUDED.lease_owner, locked_until = EXCLUDED.locked_until,"
            + " fingerprint = COALESCE(r.fingerprint, EXCLUDED.fingerprint),"
            + " updated_at = EXCLUDED.updated_at,"
            + " last_error = CASE WHEN r.state = 'IN_PROGRESS' THEN '"
            + TAKEOVER_NOTE
            + "' || COALESCE(r.lease_owner, 'a claim without lease') || ' held it until '"
            + " || COALESCE(r.locked_until::text, 'its commit') ELSE r.last_error END"
            + " WHERE NOT "
            + fingerprintMismatch("r.fingerprint", "EXCLUDED.fingerprint")
            + " AND r.attempts < ? AND (r.state = 'FAILED'"
            + " OR (r.state = 'IN_PROGRESS' AND r.locked_until < now()))"
            + " RETURNING r.key, r.attempts, r.fencing_token, r.locked_until,"
            + " (r.attempts > 1 AND r.last_error LIKE '"
            + TAKEOVER_NOTE
            + "%') AS taken_over";
    insertOrRead = insertOrRead(table, " ON CONFLICT (scope, key) DO NOTHING");
    insertUnlessSeen = insertOrRead(table, "");
    insertUnlessSeenMany = insertUnlessSeenMany(table);
    selectClaimState =
        "SELECT " + SEEN_COLUMNS + " FROM " + table + " WHERE scope = ? AND key = ANY(?::text[])";
    complete =
        "UPDATE "
            + table
            + " SET state = 'COMPLETED', result_status = ?, result_headers = ?, result_body = ?,"
            + " result_body_sha256 = ?, completed_at = now(), updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ? AND fencing_token = ? AND state = '"
            + Transitions.COMPLETE.from()
            + "'";
    completeInTransaction =
        "UPDATE "
            + table
            + " SET state = 'COMPLETED', result_status = ?, result_headers = ?, result_body = ?,"
            + " result_body_sha256 = ?,"
            + " completed_at = CASE WHEN state = 'COMPLETED' THEN completed_at ELSE now() END,"
            + " updated_at = now(), lease_owner = NULL, locked_until = NULL"
            + " WHERE scope = ? AND key = ? AND fencing_token = ? AND (state = '"
            + Transitions.COMPLETE.from()
            + "' OR (state = 'COMPLETED' AND xmin = pg_current_xact_id()::xid))";
    completeAndCommit =
        "WITH completed AS ("
            + completeInTransaction
            + " RETURNING 1) SELECT CASE WHEN count(*) = 1 THEN count(*) ELSE"
            + " ('inbox: completing the claim changed ' || count(*) || ' rows, so nothing was"
            + " committed')::bigint END FROM completed; COMMIT";
    storeResult =
        "UPDATE "
            + table
            + " SET result_status = ?, result_headers = ?, result_body = ?, result_body_sha256 = ?"
            + " WHERE scope = ? AND key = ? AND state = 'COMPLETED'";
    completeMany =
        "UPDATE "
            + table
            + " SET state = 'COMPLETED', completed_at = now(), updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ANY(?::text[]) AND state = '"
            + Transitions.COMPLETE.from()
            + "'";
    failInTransaction =
        "UPDATE "
            + table
            + " SET state = 'FAILED', last_error = ?, updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ? AND state = '"
            + Transitions.FAIL.from()
            + "'";
    recordFailure =
        "INSERT INTO "
            + table
            + " AS r (scope, key, fingerprint, state, attempts, last_error, created_at, updated_at)"
            + " VALUES (?, ?, ?, 'FAILED', ?, ?, now(), now())"
            + " ON CONFLICT (scope, key) DO UPDATE SET state = 'FAILED', attempts = r.attempts + 1,"
            + " fingerprint = COALESCE(r.fingerprint, EXCLUDED.fingerprint),"
            + " last_error = EXCLUDED.last_error, updated_at = now(),"
            + " lease_owner = NULL, locked_until = NULL"
            + " WHERE r.state = 'FAILED'"
            + " OR (r.state = 'IN_PROGRESS' AND r.locked_until < now())";
    failLease =
        "UPDATE "
            + table
            + " SET state = 'FAILED', last_error = ?, updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ? AND fencing_token = ? AND state = '"
            + Transitions.FAIL.from()
            + "'";
    renewLease =
        "UPDATE "
            + table
            + " SET locked_until = now() + ?::interval, updated_at = now() WHERE scope = ?"
            + " AND key = ? AND fencing_token = ? AND state = 'IN_PROGRESS' RETURNING locked_until";
    release =
        "UPDATE "
            + table
            + " SET state = '"
            + Transitions.RELEASE.to()
            + "', attempts = 0, lease_owner = NULL, locked_until = NULL, updated_at = now()"
            + " WHERE scope = ? AND key = ? AND (state = '"
            + Transitions.RELEASE.from()
            + "' OR state = '"
            + Transitions.RELEASE_EXPIRED_LEASE.from()
            + "' AND locked_until < now())";
    find = "SELECT " + COLUMNS + " FROM " + table + " WHERE scope = ? AND key = ?";
    purge =
        "DELETE FROM "
            + table
            + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
            + table
            + " WHERE state = 'COMPLETED' AND completed_at < now() - ?::interval"
            + " ORDER BY completed_at LIMIT ?"
            + " FOR UPDATE SKIP LOCKED)) AND state = 'COMPLETED'";
    purgeCommittedWithoutComplete =
        "DELETE FROM "
            + table
            + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
            + table
            + " WHERE state = 'IN_PROGRESS' AND locked_until IS NULL"
            + " AND updated_at < now() - ?::interval"
            + " ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED))"
            + " AND state = 'IN_PROGRESS' AND locked_until IS NULL";
    oldestInProgress =
        "SELECT min(created_at) AS oldest, now() AS db_now FROM "
            + table
            + " WHERE state = 'IN_PROGRESS' AND locked_until IS NOT NULL";
    String readReserved =
        "SELECT now() AS db_now, r.state, r.attempts, r.fingerprint,"
            + " r.fencing_token, r.locked_until, r.locked_until >= now() AS lease_live,"
            + " r.result_status, r.result_headers, r.result_body,"
            + " r.result_body_sha256 FROM (VALUES (1)) AS v LEFT JOIN "
            + table
            + " AS r ON r.scope = ? AND r.key = ?";
    reserve =
        "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM "
            + table
            + " WHERE scope = ? AND key = ?) THEN pg_try_advisory_xact_lock(hashtextextended(?, 0))"
            + " END AS reserved; "
            + readReserved;
    waitForReservation = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0)); " + readReserved;
    insertCompleted =
        "INSERT INTO "
            + table
            + " (scope, key, fingerprint, state, attempts, fencing_token, result_status,"
            + " result_headers, result_body, result_body_sha256, created_at, updated_at,"
            + " completed_at) VALUES (?, ?, ?, 'COMPLETED', 1, 1, ?, ?, ?, ?, now(), now(), now())";
    insertCompletedAndCommit = insertCompleted + "; COMMIT";
  }

  /**
   * Whether a presented fingerprint mismatches a recorded one, as {@link
   * dev.inbox.Fingerprints#mismatch} decides it: both present, of the same kind, and different.
   * True or false, never null.
   */
  static String fingerprintMismatch(String recorded, String presented) {
    return "("
        + recorded
        + " IS NOT NULL AND "
        + presented
        + " IS NOT NULL AND "
        + recorded
        + " <> "
        + presented
        + " AND "
        + fingerprintKind(recorded)
        + " = "
        + fingerprintKind(presented)
        + ")";
  }

  /**
   * The kind of a fingerprint as {@link dev.inbox.Fingerprints#kind} tells it, as bytes: the tag
   * ("INBX", the kind's length from 1 to 32, the kind) of a tagged fingerprint, or empty for an
   * untagged one. PostgreSQL does not promise to evaluate AND's operands in order, so the nested
   * CASE is what keeps {@code get_byte} from reading past the end of a short fingerprint: a CASE
   * arm is evaluated only when its condition holds, at planning time too.
   */
  static String fingerprintKind(String f) {
    String kindLength = "get_byte(" + f + ", 4)";
    return "CASE WHEN length("
        + f
        + ") > 4 AND substring("
        + f
        + " from 1 for 4) = 'INBX'::bytea THEN CASE WHEN "
        + kindLength
        + " BETWEEN 1 AND 32 AND length("
        + f
        + ") >= 5 + "
        + kindLength
        + " THEN substring("
        + f
        + " from 1 for 5 + "
        + kindLength
        + ") ELSE ''::bytea END ELSE ''::bytea END";
  }

  /**
   * The text whose 64-bit hash names a key's advisory lock: table, scope and key, joined by the
   * unit separator. Two keys share a lock only if their texts' hashes collide (or separators inside
   * them line up), which costs a wait, never a double effect: the row's primary key still decides.
   */
  String reservationLockName(String scope, String key) {
    return lockNamespace + '\u001f' + scope + '\u001f' + key;
  }
}
