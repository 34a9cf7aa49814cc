package dev.inbox.internal;

import static dev.inbox.internal.StateMachine.Transition.CLAIM;
import static dev.inbox.internal.StateMachine.Transition.COMPLETE;
import static dev.inbox.internal.StateMachine.Transition.COMPLETE_RESERVATION;
import static dev.inbox.internal.StateMachine.Transition.COUNT_FAILURE;
import static dev.inbox.internal.StateMachine.Transition.COUNT_FAILURE_AGAIN;
import static dev.inbox.internal.StateMachine.Transition.COUNT_FAILURE_OF_EXPIRED_LEASE;
import static dev.inbox.internal.StateMachine.Transition.FAIL;
import static dev.inbox.internal.StateMachine.Transition.PURGE;
import static dev.inbox.internal.StateMachine.Transition.PURGE_COMMITTED_WITHOUT_COMPLETE;
import static dev.inbox.internal.StateMachine.Transition.RELEASE;
import static dev.inbox.internal.StateMachine.Transition.RELEASE_EXPIRED_LEASE;
import static dev.inbox.internal.StateMachine.Transition.RELEASE_LIVE_LEASE;
import static dev.inbox.internal.StateMachine.Transition.RENEW;
import static dev.inbox.internal.StateMachine.Transition.RETRY;
import static dev.inbox.internal.StateMachine.Transition.SETTLE;
import static dev.inbox.internal.StateMachine.Transition.SETTLE_EXPIRED_LEASE;
import static dev.inbox.internal.StateMachine.Transition.SETTLE_LIVE_LEASE;
import static dev.inbox.internal.StateMachine.Transition.SETTLE_NEW;
import static dev.inbox.internal.StateMachine.Transition.STORE_RESULT;
import static dev.inbox.internal.StateMachine.Transition.TAKE_OVER;

import dev.inbox.InboxSettings;
import dev.inbox.Storage;

/**
 * Every SQL statement of the inbox, built once per table. The table's name is validated and quoted;
 * every value is a bind parameter. Every write takes its guard from the {@link StateMachine}'s
 * transitions, over the key's row as {@code r}; each write's Javadoc names the transitions it
 * makes.
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

  /** The columns a claim classifies a key's row {@code r} by. */
  private static final String SEEN_COLUMNS =
      "key, state, attempts, fingerprint, fencing_token, locked_until, "
          + StateMachine.LEASE_LIVE
          + " AS lease_live, result_status, result_headers, result_body, result_body_sha256";

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

  /**
   * The claim's answer: each inserted key with its lease end (the rest of a new row, attempts 1,
   * fencing token 1 and the fingerprint sent, the claimer knows; a batch of 500 keys would
   * otherwise send every fingerprint back), then each row seen, whole.
   */
  private static final String INSERTED_AND_SEEN =
      " RETURNING key, locked_until)"
          + " SELECT true AS inserted, key, NULL::text AS state, NULL::integer AS attempts,"
          + " NULL::bytea AS fingerprint, NULL::bigint AS fencing_token,"
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
   * statement now owns. Transitions: {@code CLAIM}, {@code RETRY} and {@code TAKE_OVER}, or their
   * {@code _COMPLETED} forms; maxAttempts is bound once for each of the last two.
   */
  final String claim;

  /**
   * Claims one key the cheap way: reads its row as the statement's snapshot sees it, with no lock
   * and no write, and inserts the key only if there is none. A duplicate or a new key is answered
   * in this one round trip; the rare rest (a row committed after the snapshot, a failed key to
   * retry, an expired lease) goes on to {@link #claim}. Returns the inserted row with {@code
   * inserted} true, or the row that was there with {@code inserted} false. The read is an equality
   * on the whole primary key, so even a generic plan cached while the table was empty uses the
   * index. Transition: {@code CLAIM} or {@code CLAIM_COMPLETED}.
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

  /** A lease's or the claiming transaction's completion, by fencing token: {@code COMPLETE}. */
  final String complete;

  /**
   * Adds the result to a row the claim already wrote as COMPLETED in this transaction; a HOT
   * update. Parameters: the result (four), scope, key and the claim's fencing token. Transition:
   * {@code STORE_RESULT}.
   */
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
   * key was reserved. Transition: {@code COMPLETE_RESERVATION}.
   */
  final String insertCompleted;

  /**
   * {@link #insertCompleted} and COMMIT in one round trip: the server skips the COMMIT after an
   * error, so a lost reservation commits nothing.
   */
  final String insertCompletedAndCommit;

  /** Names the table in the reservations' advisory lock names; see {@link #reservationLockName}. */
  private final String lockNamespace;

  /** {@link #complete} of many keys claimed in this transaction, without results. */
  final String completeMany;

  /** A handler's failure in the claiming transaction: {@code FAIL}. */
  final String failInTransaction;

  /**
   * A failed attempt counted after its claim rolled back: {@code COUNT_FAILURE}, {@code
   * COUNT_FAILURE_AGAIN} or {@code COUNT_FAILURE_OF_EXPIRED_LEASE}.
   */
  final String recordFailure;

  /** A lease's owner gave up, by fencing token: {@code FAIL}. */
  final String failLease;

  /** A lease extended by its owner, by fencing token: {@code RENEW}. */
  final String renewLease;

  /**
   * An operator's release, resetting the attempts and bumping the fencing token so that a late
   * lease holder is fenced off: {@code RELEASE} or {@code RELEASE_EXPIRED_LEASE}. Parameters: scope
   * and key. Returns the row as {@link #AUDIT_JSON}.
   */
  final String release;

  /** {@link #release} forced: also {@code RELEASE_LIVE_LEASE}. */
  final String releaseForced;

  /**
   * An operator's settlement with a result, bumping the fencing token: {@code SETTLE} or {@code
   * SETTLE_EXPIRED_LEASE}. Parameters: the result (four), scope and key. Returns the row as {@link
   * #AUDIT_JSON}.
   */
  final String settle;

  /** {@link #settle} forced: also {@code SETTLE_LIVE_LEASE}. */
  final String settleForced;

  /**
   * An operator's settlement of a key without a record, inserted COMPLETED: {@code SETTLE_NEW}; a
   * row committed meanwhile makes it do nothing. Parameters: scope, key, the result (four).
   */
  final String settleNew;

  /**
   * The key's row locked for an operator's change (waiting at most the transaction's lock_timeout
   * for a claimant in flight), with whether its lease runs on and the row as {@link #AUDIT_JSON}.
   */
  final String lockForOperator;

  /**
   * One audit entry, at the database's now(). Parameters: actor, reason, action, forced, scope,
   * key, the row before and after as JSON.
   */
  final String insertAudit;

  /** A key's audit entries, oldest first. Parameters: scope and key. */
  final String history;

  /** Rows per scope and state, with expired leases and give-ups. Parameter: maxAttempts. */
  final String countsPerScope;

  /**
   * The database's now(), the oldest lease, the table's size with its indexes, and the last purge.
   */
  final String overview;

  /**
   * One page of records after a cursor, ordered by the primary key, each filter skipped when null.
   * Parameters: the cursor's scope and key, then scope, state, age as an interval and least
   * attempts (each twice), then the page's size.
   */
  final String list;

  /** The janitor's last run, upserted. Parameter: rows deleted. */
  final String recordPurge;

  /**
   * How many rows {@link #purge} and {@link #purgeCommittedWithoutComplete} would delete now.
   * Parameters: the retention, twice.
   */
  final String countExpired;

  final String find;

  /**
   * Deletes a batch of completed records past the retention: {@code PURGE}. The rows locked are
   * tested again when deleted.
   */
  final String purge;

  /**
   * {@link #purge} for the rows of caller's transactions that committed a claim without {@code
   * complete()}: IN_PROGRESS without a lease, which count as completed when they were last written.
   * Transition: {@code PURGE_COMMITTED_WITHOUT_COMPLETE}.
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
        + " AS r WHERE scope = ? AND key = ?),"
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
   * A generic plan made on an empty table would still scan it per key, so the claim is planned with
   * sequential scans off ({@code Claimer}'s {@code PLAN_BY_INDEX}), and its plan can then be kept.
   */
  private static String insertUnlessSeenMany(String table) {
    return "WITH seen AS (SELECT s.* FROM unnest(?::text[]) AS q(k) CROSS JOIN LATERAL (SELECT "
        + SEEN_COLUMNS
        + " FROM "
        + table
        + " AS r WHERE scope = ? AND key = q.k LIMIT 1) s),"
        + " inserted AS (INSERT INTO "
        + table
        + NEW_ROW_COLUMNS
        + " SELECT ?, u.k, u.f, "
        + NEW_ROW_VALUES
        + " FROM unnest(?::text[], ?::bytea[]) AS u(k, f)"
        + " WHERE NOT EXISTS (SELECT 1 FROM seen WHERE seen.key = u.k) ORDER BY u.k"
        + INSERTED_AND_SEEN;
  }

  /**
   * The row {@code r} as JSON for the audit trail: every column but the body, which may be large
   * and is identified by its SHA-256.
   */
  static final String AUDIT_JSON = "to_jsonb(r) - 'result_body'";

  /** A release's UPDATE under {@code guard}; see {@link #release}. */
  private static String release(String table, String guard) {
    return "UPDATE "
        + table
        + " AS r SET state = "
        + RELEASE.toLiteral()
        + ", attempts = 0, lease_owner = NULL, locked_until = NULL,"
        + " fencing_token = r.fencing_token + 1, updated_at = now()"
        + " WHERE scope = ? AND key = ? AND "
        + guard
        + " RETURNING "
        + AUDIT_JSON
        + " AS audit_json";
  }

  /** A settlement's UPDATE under {@code guard}; see {@link #settle}. */
  private static String settle(String table, String guard) {
    return "UPDATE "
        + table
        + " AS r SET state = "
        + SETTLE.toLiteral()
        + ", result_status = ?, result_headers = ?, result_body = ?, result_body_sha256 = ?,"
        + " completed_at = now(), updated_at = now(), lease_owner = NULL, locked_until = NULL,"
        + " fencing_token = r.fencing_token + 1"
        + " WHERE scope = ? AND key = ? AND "
        + guard
        + " RETURNING "
        + AUDIT_JSON
        + " AS audit_json";
  }

  /**
   * {@code "schema"."table_suffix"}: a table beside the inbox table, named as the migrations name
   * it.
   */
  private static String besideTable(InboxSettings settings, String suffix) {
    return '"' + settings.schema() + "\".\"" + settings.table() + suffix + '"';
  }

  Statements(InboxSettings settings) {
    String table = settings.qualifiedTable();
    // Unquoted, the name every release has hashed: nodes running different versions must take
    // one lock per key.
    this.lockNamespace = keyLockNamespace(settings);
    PartitionedStatements partitions =
        settings.storage() == Storage.PARTITIONED ? new PartitionedStatements(settings) : null;
    claim =
        (partitions == null
                ? "INSERT INTO "
                    + table
                    + " AS r (scope, key, fingerprint, state, attempts, lease_owner, fencing_token,"
                    + " locked_until, created_at, updated_at, completed_at)"
                    + " SELECT ?, u.k, u.f, "
                    + NEW_ROW_VALUES
                    + " FROM unnest(?::text[], ?::bytea[]) AS u(k, f) ORDER BY u.k"
                    + " ON CONFLICT "
                    + CLAIM.guard()
                : partitions.claimRows(NEW_ROW_VALUES))
            + " DO UPDATE SET state = EXCLUDED.state,"
            + " completed_at = EXCLUDED.completed_at,"
            + " attempts = r.attempts + 1, fencing_token = r.fencing_token + 1,"
            + " lease_owner = EXCLUDED.lease_owner, locked_until = EXCLUDED.locked_until,"
            + " fingerprint = COALESCE(r.fingerprint, EXCLUDED.fingerprint),"
            + " updated_at = EXCLUDED.updated_at,"
            + " last_error = CASE WHEN "
            + TAKE_OVER.stateGuard()
            + " THEN '"
            + TAKEOVER_NOTE
            + "' || COALESCE(r.lease_owner, 'a claim without lease') || ' held it until '"
            + " || COALESCE(r.locked_until::text, 'its commit') ELSE r.last_error END"
            + " WHERE NOT "
            + fingerprintMismatch("r.fingerprint", "EXCLUDED.fingerprint")
            + " AND "
            + StateMachine.anyOf(RETRY, TAKE_OVER)
            + " RETURNING r.key, r.attempts, r.fencing_token, r.locked_until,"
            + " (r.attempts > 1 AND r.last_error LIKE '"
            + TAKEOVER_NOTE
            + "%') AS taken_over";
    insertOrRead =
        insertOrRead(
            table,
            // A partitioned table has no unique index on (scope, key) alone to name.
            partitions == null
                ? " ON CONFLICT " + CLAIM.guard() + " DO NOTHING"
                : " ON CONFLICT DO NOTHING");
    insertUnlessSeen = insertOrRead(table, "");
    insertUnlessSeenMany = insertUnlessSeenMany(table);
    selectClaimState =
        "SELECT "
            + SEEN_COLUMNS
            + " FROM "
            + table
            + " AS r WHERE scope = ? AND key = ANY(?::text[])";
    complete =
        "UPDATE "
            + table
            + " AS r SET state = "
            + COMPLETE.toLiteral()
            + ", result_status = ?, result_headers = ?, result_body = ?,"
            + " result_body_sha256 = ?, completed_at = now(), updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ? AND fencing_token = ? AND "
            + COMPLETE.guard();
    storeResult =
        "UPDATE "
            + table
            + " AS r SET result_status = ?, result_headers = ?, result_body = ?,"
            + " result_body_sha256 = ? WHERE scope = ? AND key = ? AND fencing_token = ? AND "
            + STORE_RESULT.guard();
    completeMany =
        "UPDATE "
            + table
            + " AS r SET state = "
            + COMPLETE.toLiteral()
            + ", completed_at = now(), updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ANY(?::text[]) AND "
            + COMPLETE.guard();
    failInTransaction =
        "UPDATE "
            + table
            + " AS r SET state = "
            + FAIL.toLiteral()
            + ", last_error = ?, updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ? AND "
            + FAIL.guard();
    recordFailure =
        (partitions == null
                ? "INSERT INTO "
                    + table
                    + " AS r (scope, key, fingerprint, state, attempts, last_error, created_at,"
                    + " updated_at) VALUES (?, ?, ?, "
                    + COUNT_FAILURE.toLiteral()
                    + ", ?, ?, now(), now()) ON CONFLICT "
                    + COUNT_FAILURE.guard()
                : partitions.recordFailureRow(COUNT_FAILURE.toLiteral()))
            + " DO UPDATE SET state = "
            + COUNT_FAILURE_AGAIN.toLiteral()
            + ", attempts = r.attempts + 1,"
            + " fingerprint = COALESCE(r.fingerprint, EXCLUDED.fingerprint),"
            + " last_error = EXCLUDED.last_error, updated_at = now(),"
            + " lease_owner = NULL, locked_until = NULL WHERE "
            + StateMachine.anyOf(COUNT_FAILURE_AGAIN, COUNT_FAILURE_OF_EXPIRED_LEASE);
    failLease =
        "UPDATE "
            + table
            + " AS r SET state = "
            + FAIL.toLiteral()
            + ", last_error = ?, updated_at = now(), lease_owner = NULL,"
            + " locked_until = NULL WHERE scope = ? AND key = ? AND fencing_token = ? AND "
            + FAIL.guard();
    renewLease =
        "UPDATE "
            + table
            + " AS r SET locked_until = now() + ?::interval, updated_at = now() WHERE scope = ?"
            + " AND key = ? AND fencing_token = ? AND "
            + RENEW.guard()
            + " RETURNING locked_until";
    release = release(table, StateMachine.anyOf(RELEASE, RELEASE_EXPIRED_LEASE));
    releaseForced =
        release(table, StateMachine.anyOf(RELEASE, RELEASE_EXPIRED_LEASE, RELEASE_LIVE_LEASE));
    settle = settle(table, StateMachine.anyOf(SETTLE, SETTLE_EXPIRED_LEASE));
    settleForced =
        settle(table, StateMachine.anyOf(SETTLE, SETTLE_EXPIRED_LEASE, SETTLE_LIVE_LEASE));
    settleNew =
        "INSERT INTO "
            + table
            + " AS r (scope, key, state, attempts, fencing_token, result_status, result_headers,"
            + " result_body, result_body_sha256, created_at, updated_at, completed_at)"
            + " VALUES (?, ?, "
            + SETTLE_NEW.toLiteral()
            + ", 0, 1, ?, ?, ?, ?, now(), now(), now()) ON CONFLICT "
            + (partitions == null ? SETTLE_NEW.guard() + " " : "")
            + "DO NOTHING RETURNING "
            + AUDIT_JSON
            + " AS audit_json";
    lockForOperator =
        "SELECT "
            + COLUMNS
            + ", "
            + StateMachine.LEASE_LIVE
            + " AS lease_live, "
            + AUDIT_JSON
            + " AS audit_json FROM "
            + table
            + " AS r WHERE scope = ? AND key = ? FOR UPDATE";
    String audit = besideTable(settings, "_audit");
    insertAudit =
        "INSERT INTO "
            + audit
            + " (at, actor, reason, action, forced, scope, key, before, after)"
            + " VALUES (now(), ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)";
    history =
        "SELECT id, at, actor, reason, action, forced, before::text AS before,"
            + " after::text AS after FROM "
            + audit
            + " WHERE scope = ? AND key = ? ORDER BY id";
    countsPerScope =
        "SELECT scope, state, count(*) AS total,"
            + " count(*) FILTER (WHERE "
            + StateMachine.Condition.LEASE_EXPIRED.sql()
            + ") AS expired_leases,"
            + " count(*) FILTER (WHERE attempts >= ? AND (state = 'FAILED' OR "
            + StateMachine.Condition.LEASE_EXPIRED.sql()
            + ")) AS gave_up"
            + " FROM "
            + table
            + " AS r GROUP BY scope, state ORDER BY scope, state";
    list =
        "SELECT "
            + COLUMNS
            + " FROM "
            + table
            + " AS r WHERE (scope, key) > (?, ?)"
            + " AND (?::text IS NULL OR scope = ?::text)"
            + " AND (?::text IS NULL OR state = ?::text)"
            + " AND (?::interval IS NULL OR created_at < now() - ?::interval)"
            + " AND (?::integer IS NULL OR attempts >= ?::integer)"
            + " ORDER BY scope, key LIMIT ?";
    String purges = besideTable(settings, "_purges");
    overview =
        "SELECT now() AS db_now,"
            + " (SELECT min(created_at) FROM "
            + table
            + " WHERE state = 'IN_PROGRESS' AND locked_until IS NOT NULL) AS oldest_lease,"
            + (partitions == null
                ? " pg_total_relation_size('" + table.replace("'", "''") + "')"
                : partitions.tableBytes())
            + " AS table_bytes, p.last_run_at, p.last_deleted"
            + " FROM (VALUES (1)) AS v LEFT JOIN "
            + purges
            + " AS p ON p.id = 1";
    recordPurge =
        "INSERT INTO "
            + purges
            + " AS p (id, last_run_at, last_deleted) VALUES (1, now(), ?) ON CONFLICT (id)"
            + " DO UPDATE SET last_run_at = EXCLUDED.last_run_at,"
            + " last_deleted = EXCLUDED.last_deleted";
    countExpired =
        "SELECT (SELECT count(*) FROM "
            + table
            + " AS r WHERE "
            + PURGE.guard()
            + ") + (SELECT count(*) FROM "
            + table
            + " AS r WHERE "
            + PURGE_COMMITTED_WITHOUT_COMPLETE.guard()
            + ") AS expired";
    find = "SELECT " + COLUMNS + " FROM " + table + " WHERE scope = ? AND key = ?";
    purge =
        "DELETE FROM "
            + table
            + " AS r WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
            + table
            + " AS r WHERE "
            + PURGE.guard()
            + " ORDER BY completed_at LIMIT ? FOR UPDATE SKIP LOCKED)) AND "
            + PURGE.stateGuard();
    purgeCommittedWithoutComplete =
        "DELETE FROM "
            + table
            + " AS r WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
            + table
            + " AS r WHERE "
            + PURGE_COMMITTED_WITHOUT_COMPLETE.guard()
            + " ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED)) AND "
            + PURGE_COMMITTED_WITHOUT_COMPLETE.stateGuard();
    oldestInProgress =
        "SELECT min(created_at) AS oldest, now() AS db_now FROM "
            + table
            + " WHERE state = 'IN_PROGRESS' AND locked_until IS NOT NULL";
    String readReserved =
        "SELECT now() AS db_now, r.state, r.attempts, r.fingerprint,"
            + " r.fencing_token, r.locked_until, "
            + StateMachine.LEASE_LIVE
            + " AS lease_live,"
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
            + " completed_at) VALUES (?, ?, ?, "
            + COMPLETE_RESERVATION.toLiteral()
            + ", 1, 1, ?, ?, ?, ?, now(), now(), now())";
    insertCompletedAndCommit = insertCompleted + "; COMMIT";
  }

  /**
   * Whether a presented fingerprint mismatches a recorded one, as {@link
   * dev.inbox.internal.Fingerprints#mismatch} decides it: both present, of the same kind, and
   * different. True or false, never null.
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
   * The kind of a fingerprint as {@link dev.inbox.internal.Fingerprints#kind} tells it, as bytes:
   * the tag ("INBX", the kind's length from 1 to 32, the kind) of a tagged fingerprint, or empty
   * for an untagged one. PostgreSQL does not promise to evaluate AND's operands in order, so the
   * nested CASE is what keeps {@code get_byte} from reading past the end of a short fingerprint: a
   * CASE arm is evaluated only when its condition holds, at planning time too.
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
    return keyLockName(lockNamespace, scope, key);
  }

  /** The table's part of its keys' lock names, as the key guard's trigger writes it. */
  static String keyLockNamespace(InboxSettings settings) {
    return settings.schema() + "." + settings.table();
  }

  /** A key's lock name, {@link #reservationLockName}, for a table's {@link #keyLockNamespace}. */
  static String keyLockName(String namespace, String scope, String key) {
    return namespace + '\u001f' + scope + '\u001f' + key;
  }
}
