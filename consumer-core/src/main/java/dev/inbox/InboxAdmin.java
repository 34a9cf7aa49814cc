package dev.inbox;

import java.util.Optional;

/** Operations on single keys and on retention, for operators and read-only checks. */
public interface InboxAdmin {

  /** The record of a key. */
  Optional<InboxRecord> find(String scope, String key);

  /**
   * What a claim of the key would answer, when the key is settled already: {@code DUPLICATE} (with
   * its stored result), {@code MISMATCH}, {@code GAVE_UP}, or {@code IN_PROGRESS} under a live
   * lease. Empty when a claim could be {@code NEW} (or would wait on a transaction in flight).
   *
   * <p>It only reads: no lock, no write, one round trip on a connection of its own. A settled key
   * never becomes claimable again except through {@link #release} or {@link #purgeExpired}.
   *
   * @param fingerprint of the request, checked against the stored one; null skips the check
   */
  Optional<Claim> lookup(String scope, String key, byte[] fingerprint);

  /**
   * Frees a {@code FAILED} (or given-up) key for reprocessing, such as replaying a dead letter, and
   * likewise a key whose lease expired (one that gave up after its leases expired {@code
   * maxAttempts} times stays {@code IN_PROGRESS} with an expired lease).
   *
   * <p>{@link #release(String, String, AdminAction)} by this node ({@code ownerId}) with a fixed
   * reason, so it is audited and fences off a late lease holder too; a key under a live lease is
   * {@link ReleaseResult#NOT_RELEASABLE} here, never an exception.
   */
  ReleaseResult release(String scope, String key);

  /**
   * An operator's release: frees a {@code FAILED} (or given-up) key, or one whose lease expired, so
   * that the next claim runs it as {@code NEW}, exactly once. Its attempts are reset and its
   * fencing token grows, so that a late lease holder's {@code complete}, {@code fail} or {@code
   * renew} throws {@link LeaseLostException}. Audited in the same transaction (who, when by the
   * database's clock, why, the record before and after). A {@code COMPLETED} key is never released:
   * its effect is committed.
   *
   * @throws LiveLeaseException when the key's lease runs on and the action is not {@link
   *     AdminAction#force}; nothing was changed
   * @throws InboxDatabaseException when a claimant held the key past {@code lockTimeout}, or the
   *     database failed; nothing was changed
   */
  ReleaseResult release(String scope, String key, AdminAction action);

  /**
   * An operator's settlement, for an external effect reconciled by hand: the key becomes {@code
   * COMPLETED} with {@code result} (null: none), from {@code FAILED} (given up, too), an expired
   * lease, or no record at all. Every later claim answers {@code DUPLICATE} with that result (over
   * HTTP, a replay). Its fencing token grows, so that a late lease holder is fenced off, and the
   * change is audited in the same transaction.
   *
   * @throws LiveLeaseException when the key's lease runs on and the action is not {@link
   *     AdminAction#force}; nothing was changed
   */
  SettleResult settle(String scope, String key, StoredResult result, AdminAction action);

  /** One key: its record, if any, and every audited change of it, read in one transaction. */
  KeyReport show(String scope, String key);

  /**
   * Counts per scope and state, the oldest lease, the table's size and the last purge. It scans the
   * whole table: run it on demand, not in a tight loop.
   */
  InboxStats stats();

  /**
   * One page of the records that match {@code filter}, ordered by scope and key.
   *
   * @param after the cursor from the previous page ({@link KeyPage#next}), or null for the first
   * @param limit the page's size, from 1 to 10,000
   */
  KeyPage list(KeyFilter filter, String after, int limit);

  /** How many records {@link #purgeExpired} would delete now; it deletes nothing. */
  long countExpired();

  /**
   * Deletes {@code COMPLETED} records older than {@code retention} by the database's clock, in
   * statements of at most {@code purgeBatchSize} rows that skip locked rows, so that claims never
   * wait on it. Never touches {@code FAILED} records or leases; an {@code IN_PROGRESS} record
   * without a lease (a claim committed without {@code complete}) counts as completed when it was
   * last written.
   *
   * <p>On the partitioned storage it rotates when due and drops the generations past the retention
   * instead (docs/scale.md), deleting no row.
   *
   * @return the number of rows deleted; on the partitioned storage, the rows of the dropped
   *     partitions as PostgreSQL's statistics estimate them (counted when it has none), since
   *     counting them would read each partition once more
   */
  long purgeExpired();
}
