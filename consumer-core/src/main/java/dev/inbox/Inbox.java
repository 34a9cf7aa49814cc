package dev.inbox;

import java.sql.Connection;
import java.util.List;

/**
 * Exactly-once effects for message consumers and HTTP APIs, kept in one PostgreSQL table.
 *
 * <p>How it works: every message id or Idempotency-Key is claimed as a (scope, key) record in the
 * same database transaction as the handler's own writes, and the record is completed with the
 * handler's result before that transaction commits. Claim, writes and result commit or roll back
 * together: a crash leaves nothing behind, and a duplicate finds the committed record and gets the
 * first answer back.
 *
 * <p>Twelve methods:
 *
 * <ul>
 *   <li>{@link #execute} runs a handler once for one key; {@link #executeBatch} runs a batch of
 *       keys in one transaction, with a per-item or a {@linkplain BatchHandler#setBased set-based}
 *       handler. Both run in a transaction the inbox begins, or join the calling thread's
 *       transaction when the inbox was built with {@link
 *       InboxBuilder#callerTransactions(dev.inbox.spi.CallerTransactions)} (Spring's
 *       {@code @Transactional}, for instance), so that the handler's repository writes commit with
 *       the key.
 *   <li>{@link #claim}, {@link #complete} and {@link #recordFailure} are the same protocol, step by
 *       step, on a connection whose transaction the caller drives.
 *   <li>{@link #leases()} is the leased mode, for side effects outside the database; {@link
 *       #admin()} finds, looks up, releases and purges keys.
 * </ul>
 *
 * <p>A fingerprint presented with a key is compared with the one the key recorded only when both
 * are of the same kind: a message's payload fingerprint never mismatches the HTTP filter's request
 * fingerprint, since one key space is shared by every channel. A key's first recorded fingerprint
 * stays with it, also when that attempt failed.
 *
 * <p>Instances are thread-safe. {@link #close()} stops the janitor; it never closes the data
 * source.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder().dataSource(dataSource).migrate(true).build();
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

  /** {@link #execute(String, String, byte[], TransactionalHandler)} without a fingerprint check. */
  default Execution execute(String scope, String key, TransactionalHandler handler) {
    return execute(scope, key, null, handler);
  }

  /**
   * Runs the handler once for the key: claim, handler writes and result commit together.
   *
   * <p>A concurrent call with the same key waits for the first for at most {@code lockTimeout},
   * then sees {@code DUPLICATE} (the first committed) or {@code NEW} (the first rolled back), or
   * {@code IN_PROGRESS} after the bound.
   *
   * <p>In a transaction the inbox begins, the handler runs as the inbox set it up: READ COMMITTED
   * (the claim needs to see rows committed by the transactions it waited for) and with {@code
   * lock_timeout} set to {@code lockTimeout}, so that every lock wait of the handler is bounded
   * too. The inbox picks how to claim: a key with no record is held by a transaction-level lock and
   * its record written once, with the result, in the commit's round trip. When the calling thread's
   * transaction is joined instead ({@link
   * InboxBuilder#callerTransactions(dev.inbox.spi.CallerTransactions)}), the claim and the handler
   * run under a savepoint of it: a failing handler is rolled back to that savepoint and its attempt
   * counted, and the caller's transaction commits the rest; the inbox never commits it.
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
   * commits once (or, joining the caller's transaction, releases its savepoint).
   *
   * <p>Under {@link BatchFailurePolicy#CONTINUE} a failing item does not undo the others; under
   * {@link BatchFailurePolicy#STOP} the items after the first failure are left untouched, so that a
   * Kafka partition's order is kept. The handler is either per item ({@code (item, tx) -> ...}) or
   * {@linkplain BatchHandler#setBased set-based}: one call for all the new items, so that their
   * writes can be set-based statements and the batch costs a fixed number of round trips.
   *
   * <p>A key repeated inside the batch is a {@code DUPLICATE} of its first occurrence; a repeat
   * with another fingerprint is decided against the key's record (and against its first occurrence
   * when that one ran): a {@code MISMATCH} only if it differs from what was recorded, and {@code
   * NOT_ATTEMPTED} when it matches a record that lets it run but its first occurrence was the
   * mismatch, so that it runs in a later batch. An item whose handler returns with the transaction
   * aborted (it caught an SQL error without a savepoint) is {@code FAILED} like one that throws:
   * the inbox never reports an item done that did not commit.
   *
   * @throws InvalidKeyException when any key breaks a rule; nothing is written
   */
  <T> BatchResult<T> executeBatch(
      String scope, List<BatchItem<T>> items, BatchFailurePolicy policy, BatchHandler<T> handler);

  /**
   * Claims a key on a connection the caller already has in a transaction (bring your own
   * transaction: Spring's {@code @Transactional}, jOOQ, plain JDBC). The claim runs under a
   * savepoint, so that neither a duplicate nor a lock timeout aborts the caller's transaction. The
   * inbox never commits or rolls back this transaction. On {@code NEW}, do the work and call {@link
   * #complete} before committing. A new key's record is written {@code COMPLETED} at once (no other
   * transaction sees it before the commit, and a rollback takes it away with the work), so a commit
   * without {@code complete} has still recorded the work: the key then answers {@code DUPLICATE},
   * with no stored result. After a rollback, call {@link #recordFailure} so that a poison request
   * reaches {@code GAVE_UP}.
   *
   * @throws IllegalArgumentException when the connection is in auto-commit mode
   */
  Claim claim(Connection transaction, String scope, String key, byte[] fingerprint);

  /**
   * Completes a {@code NEW} claim made with {@link #claim}, on the caller's transaction, in one
   * round trip: stores its result (null: none) on the record the claim wrote {@code COMPLETED}.
   * Refuses, with an {@link IllegalStateException}, a claim whose record this transaction no longer
   * holds (a rollback to a savepoint taken before the claim undid it, or another transaction made
   * it): committing the work then would leave it without its key.
   *
   * @throws InboxDatabaseException when the transaction was aborted by an earlier SQL error (its
   *     commit would roll back): roll it back
   */
  void complete(Connection transaction, Claim claim, StoredResult result);

  /**
   * Counts a failed attempt of a {@code NEW} claim whose transaction the caller rolled back, so
   * that a poison message reaches {@code GAVE_UP}: on {@code connection}, the one that rolled back
   * typically, in a short transaction of its own that this method commits (a connection in
   * auto-commit mode is left in it). No second connection is taken, so a caller holding the last
   * one of its pool cannot wait for it; only when the count cannot be written there (the connection
   * broke) is it written on a connection of the inbox's own. The key keeps the claim's fingerprint:
   * a retry with another request is a {@code MISMATCH}. Best effort: a count the database refuses
   * is logged, and the key gets one more attempt.
   *
   * @throws IllegalStateException when {@code connection} is still inside a transaction (its commit
   *     would commit that work too): roll it back first
   */
  void recordFailure(Connection connection, Claim claim, String error);

  /** The leased mode: claims that commit at once, with a lease and a fencing token. */
  Leases leases();

  /** Operations on single keys and on retention, for operators and for read-only checks. */
  InboxAdmin admin();

  /** Stops the janitor, waiting for a purge in progress. Does not close the data source. */
  @Override
  void close();
}
