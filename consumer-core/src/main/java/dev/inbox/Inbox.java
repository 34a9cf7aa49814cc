package dev.inbox;

import java.sql.Connection;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Exactly-once effects for message consumers and HTTP APIs, kept in one PostgreSQL table.
 *
 * <p>Every message id or Idempotency-Key is claimed as a (scope, key) record. In <b>transactional
 * mode</b> ({@link #execute}, {@link #executeBatch}, {@link #claim(Connection, String, String,
 * byte[])}) the claim, the handler's writes and the stored result commit or roll back together: a
 * crash leaves nothing behind, and a duplicate finds the committed record. In <b>leased mode</b>
 * ({@link #claimLease}) the claim commits at once with a lease and a fencing token, for side
 * effects outside the database.
 *
 * <p>A fingerprint presented with a claim is compared with the one the key recorded only when both
 * are of the same {@linkplain Fingerprints#kind kind}: a message's payload fingerprint ({@link
 * Fingerprints#ofMessage}) never mismatches the HTTP filter's request fingerprint, since one key
 * space is shared by every channel. A key's first recorded fingerprint stays with it, also when
 * that attempt failed.
 *
 * <p>Instances are thread-safe. {@link #close()} stops the janitor; it never closes the data
 * source.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder().dataSource(dataSource).build();
 * inbox.migrate();
 * Execution run = inbox.execute("payments-consumer", messageId, tx -> {
 *   try (var insert = tx.prepareStatement("insert into payments ...")) { ...; insert.executeUpdate(); }
 *   return null;
 * });
 * }</pre>
 */
public interface Inbox extends AutoCloseable {

  static InboxBuilder builder() {
    return new InboxBuilder();
  }

  /** The frozen settings this inbox runs with. */
  InboxSettings settings();

  /** Creates or upgrades the inbox table with Flyway; see {@link InboxSchema#migrate}. */
  void migrate();

  /**
   * Runs the handler once for the key, in a transaction of the inbox's own: claim, handler writes
   * and result commit together. Without fingerprint check.
   *
   * @see #execute(String, String, byte[], TransactionalHandler)
   */
  default Execution execute(String scope, String key, TransactionalHandler handler) {
    return execute(scope, key, null, handler);
  }

  /**
   * Runs the handler once for the key, in a transaction of the inbox's own.
   *
   * <p>A concurrent call with the same key waits on PostgreSQL's row lock for at most {@code
   * lockTimeout}, then sees {@code DUPLICATE} (the first committed) or {@code NEW} (the first
   * rolled back), or {@code IN_PROGRESS} after the bound.
   *
   * <p>The handler runs in that transaction as the inbox set it up: READ COMMITTED (the claim needs
   * to see rows committed by the transactions it waited for), whatever isolation the pool's
   * connections default to, and with {@code lock_timeout} set to {@code lockTimeout}, so that every
   * lock wait of the handler is bounded too. A handler that needs another isolation level should
   * bring its own transaction ({@link #claim(Connection, String, String, byte[])}). The same holds
   * for the batch methods.
   *
   * @param fingerprint the SHA-256 of the request, or null to skip the mismatch check; compared
   *     only with a recorded fingerprint of the same kind
   * @throws InvalidKeyException when the scope or key breaks a rule; nothing is written
   * @throws HandlerFailedException when the handler throws, or returns with its transaction aborted
   *     by an SQL error it caught without rolling back to a savepoint (PostgreSQL would commit none
   *     of it); its writes are rolled back and the attempt is counted in a short transaction of its
   *     own
   * @throws InboxDatabaseException when PostgreSQL fails; if it failed during commit, the outcome
   *     is unknown and a retry is safe. Also when the handler hit a failure that says nothing about
   *     the message ({@link TransientFailures}: a deadlock, serialization failure, lock wait past
   *     {@code lockTimeout} or lost connection): its writes are rolled back and the attempt is not
   *     counted
   */
  Execution execute(String scope, String key, byte[] fingerprint, TransactionalHandler handler);

  /**
   * Claims a batch of keys of one scope in one round trip, runs the handler for the new items, and
   * commits once. A failing item does not undo the others ({@link BatchFailurePolicy#CONTINUE}). A
   * key repeated inside the batch is a {@code DUPLICATE} of its first occurrence; a repeat with
   * another fingerprint is decided against the key's record (and against its first occurrence when
   * that one ran): a {@code MISMATCH} only if it differs from what was recorded, and {@code
   * NOT_ATTEMPTED} when it matches a record that lets it run but its first occurrence was the
   * mismatch, so that it runs in a later batch. An item whose handler returns with the transaction
   * aborted (it caught an SQL error without a savepoint) is {@code FAILED} like one that throws:
   * the inbox never reports an item done that did not commit.
   *
   * @throws InvalidKeyException when any key breaks a rule; nothing is written
   */
  default <T> BatchResult<T> executeBatch(
      String scope, List<BatchItem<T>> items, BatchHandler<T> handler) {
    return executeBatch(scope, items, BatchFailurePolicy.CONTINUE, handler);
  }

  /**
   * Like {@link #executeBatch(String, List, BatchHandler)}, with a choice of what follows a
   * failure. Under {@link BatchFailurePolicy#STOP} the items after the first failure are left
   * untouched, so that a Kafka partition's order is kept.
   */
  <T> BatchResult<T> executeBatch(
      String scope, List<BatchItem<T>> items, BatchFailurePolicy policy, BatchHandler<T> handler);

  /**
   * Like {@link #executeBatch(String, List, BatchFailurePolicy, BatchHandler)}, with one handler
   * call for all the new items of the batch, so that their writes can be set-based statements: the
   * batch then costs a fixed number of round trips, however many new items it has. When the handler
   * throws, the batch runs again with one item per call to find the failing one (see {@link
   * NewItemsHandler}).
   *
   * @throws InvalidKeyException when any key breaks a rule; nothing is written
   */
  <T> BatchResult<T> executeBatchAtOnce(
      String scope,
      List<BatchItem<T>> items,
      BatchFailurePolicy policy,
      NewItemsHandler<T> handler);

  /**
   * Claims a key on a connection the caller already has in a transaction (bring your own
   * transaction: Spring's {@code @Transactional}, jOOQ, plain JDBC). The claim runs under a
   * savepoint, so that neither a duplicate nor a lock timeout aborts the caller's transaction. The
   * inbox never commits or rolls back this transaction. On {@code NEW}, do the work and call {@link
   * #complete(Connection, Claim, StoredResult)} before committing. A commit without it has still
   * committed the work: the key then answers {@code DUPLICATE}, with no stored result, and is
   * purged like a completed one.
   *
   * @throws IllegalArgumentException when the connection is in auto-commit mode
   */
  Claim claim(Connection transaction, String scope, String key, byte[] fingerprint);

  /**
   * Like {@link #claim(Connection, String, String, byte[])}, as the first statement of a
   * transaction the caller has just begun for this claim: one round trip instead of three, because
   * it needs no savepoint. The inbox sets the transaction's isolation (READ COMMITTED) and lock
   * timeout. Unless the claim is {@code NEW}, roll the transaction back: after a lock timeout
   * ({@code IN_PROGRESS}) it is aborted.
   *
   * <p>On {@code NEW} the row is written as {@code COMPLETED} at once, since it can only ever be
   * seen committed, and {@link #complete(Connection, Claim, StoredResult)} or {@link
   * #completeAndCommit(Connection, Claim, StoredResult)} then adds the result without touching an
   * index. Call one of them before committing all the same: a commit without it stores no result.
   *
   * @throws IllegalArgumentException when the connection is in auto-commit mode
   */
  Claim claimAtStart(Connection transaction, String scope, String key, byte[] fingerprint);

  /**
   * Marks a {@code NEW} claim made with {@link #claim(Connection, String, String, byte[])}
   * completed.
   *
   * @throws InboxDatabaseException when the transaction was aborted by an earlier SQL error (its
   *     commit would roll back): roll it back
   */
  void complete(Connection transaction, Claim claim, StoredResult result);

  /**
   * {@link #complete(Connection, Claim, StoredResult)} and commit, in one round trip instead of
   * two. If the completion fails, nothing is committed: the transaction is left aborted for the
   * caller to roll back, and this method throws.
   *
   * @throws InboxDatabaseException when the completion or the commit failed
   */
  void completeAndCommit(Connection transaction, Claim claim, StoredResult result);

  /**
   * Counts a failed attempt of a claim whose transaction the caller rolled back, in a short
   * transaction of its own, so that a poison message reaches {@code GAVE_UP}. The key keeps the
   * claim's fingerprint: a retry with another request is a {@code MISMATCH}.
   */
  void recordFailure(Claim claim, String error);

  /**
   * Like {@link #claimAtStart}, for a caller that completes in the same transaction and expects
   * most keys to be new (an HTTP API's first requests): the key's record is written once, by the
   * completion, with the result, instead of at the claim and again at the completion. Until then
   * the key is held by a transaction-level advisory lock that the claim's read takes, so the claim
   * writes nothing. One round trip; a settled key is answered from the same read, with no lock.
   *
   * <p>What others see differs from {@link #claimAtStart}:
   *
   * <ul>
   *   <li>Another reservation of the key answers {@code IN_PROGRESS} at once instead of waiting for
   *       this transaction: poll until it answers otherwise.
   *   <li>A claim that is not a reservation (a consumer's batch, {@link #execute}, {@link
   *       #claimAtStart}) does not see the lock. If one of them records the key first, the
   *       completion throws {@link ReservationLostException} and commits nothing; reserving again
   *       then answers with that claim's outcome.
   *   <li>The record is read after the lock is taken (a second statement in the same round trip),
   *       and PostgreSQL makes a commit visible before it releases the committing transaction's
   *       locks: a reservation that gets the lock of a key another reservation has just completed
   *       finds its record and answers {@code DUPLICATE}, never {@code NEW}.
   * </ul>
   *
   * <p>The lock is {@code pg_try_advisory_xact_lock} on a 64-bit hash of the table, scope and key,
   * in the database's one space of advisory locks (PostgreSQL 11 or later, for {@code
   * hashtextextended}); an application's own advisory lock on the same number would only make a
   * reservation answer {@code IN_PROGRESS} while it is held.
   *
   * <p>A key whose record can be claimed again (a failed attempt below {@code maxAttempts}, an
   * expired lease) is claimed in the same transaction as {@link #claimAtStart} would, and the
   * reservation says {@code recordDeferred} false. Either way, commit only through {@link
   * #completeAndCommit(Connection, Reservation, StoredResult)} or after {@link
   * #complete(Connection, Reservation, StoredResult)}: a commit without them records nothing, and
   * the key stays new. Unless the reservation is {@code NEW}, roll the transaction back.
   *
   * @param fingerprint the SHA-256 of the request, or null to skip the mismatch check
   * @throws IllegalArgumentException when the connection is in auto-commit mode
   */
  Reservation reserveAtStart(Connection transaction, String scope, String key, byte[] fingerprint);

  /**
   * Records a {@code NEW} reservation as completed with its result, on the caller's transaction.
   *
   * @throws ReservationLostException when another claimant recorded the key first; the transaction
   *     is then aborted, and must be rolled back
   */
  void complete(Connection transaction, Reservation reservation, StoredResult result);

  /**
   * {@link #complete(Connection, Reservation, StoredResult)} and commit, in one round trip. If the
   * completion fails, nothing is committed and the transaction is left aborted for the caller to
   * roll back.
   *
   * @throws ReservationLostException when another claimant recorded the key first
   * @throws InboxDatabaseException when the completion or the commit failed otherwise
   */
  void completeAndCommit(Connection transaction, Reservation reservation, StoredResult result);

  /**
   * {@link #recordFailure(Claim, String)} for a reservation whose transaction the caller rolled
   * back. Like it, the failed record keeps the reservation's fingerprint, so that a retry with
   * another request is a {@code MISMATCH} (the HTTP filter's 422), not a new attempt.
   */
  void recordFailure(Reservation reservation, String error);

  /**
   * Leased mode: claims the key and commits {@code IN_PROGRESS} at once, with a lease of {@code
   * leaseDuration} and a fencing token. An expired lease is taken over by this claim atomically.
   * When a lease ends, and whether it has, is decided by the database's clock, never the node's.
   */
  Claim claimLease(String scope, String key, byte[] fingerprint);

  /**
   * Completes a leased claim with its result.
   *
   * @throws LeaseLostException when another owner took the lease over
   */
  void complete(LeaseToken lease, StoredResult result);

  /**
   * Records a leased claim's failure; the key can be claimed again until {@code maxAttempts}.
   *
   * @throws LeaseLostException when another owner took the lease over
   */
  void fail(LeaseToken lease, String error);

  /**
   * Extends a lease to {@code leaseDuration} from now, on the database's clock.
   *
   * @throws LeaseLostException when another owner took the lease over
   */
  LeaseToken renew(LeaseToken lease);

  /** The record of a key, for operators. */
  Optional<InboxRecord> find(String scope, String key);

  /**
   * What a claim of the key would answer, when the key is settled already: {@code DUPLICATE} (with
   * its stored result), {@code MISMATCH}, {@code GAVE_UP}, or {@code IN_PROGRESS} under a live
   * lease. Empty when a claim could be {@code NEW} (or would wait on a transaction in flight).
   *
   * <p>It only reads: no lock, no write, one round trip on a connection of its own. A settled key
   * never becomes claimable again except through {@link #release} or {@link #purgeExpired}, so a
   * caller that expects many retries (an HTTP API) can answer them from here and claim only when
   * this is empty.
   *
   * @param fingerprint of the request, checked against the stored one; null skips the check
   */
  Optional<Claim> lookup(String scope, String key, byte[] fingerprint);

  /**
   * Frees a {@code FAILED} (or given-up) key for reprocessing, such as replaying a dead letter, and
   * likewise a key whose lease expired (one that gave up after its leases expired {@code
   * maxAttempts} times stays {@code IN_PROGRESS} with an expired lease).
   */
  ReleaseResult release(String scope, String key);

  /**
   * Deletes {@code COMPLETED} records older than {@code retention} by the database's clock, in
   * statements of at most {@code purgeBatchSize} rows that skip locked rows, so that claims never
   * wait on it. Never touches {@code FAILED} records or leases; an {@code IN_PROGRESS} record
   * without a lease (a claim committed without {@code complete}) counts as completed when it was
   * last written.
   *
   * @return the number of rows deleted
   */
  long purgeExpired();

  /** Stops the janitor, waiting for a purge in progress. Does not close the data source. */
  @Override
  void close();

  /** For static factories that want a data source only. */
  static Inbox create(DataSource dataSource) {
    return builder().dataSource(dataSource).build();
  }
}
