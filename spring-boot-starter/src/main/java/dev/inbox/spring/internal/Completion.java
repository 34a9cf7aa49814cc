package dev.inbox.spring.internal;

import dev.inbox.Claim;
import dev.inbox.Inbox;
import dev.inbox.InboxDatabaseException;
import dev.inbox.TransientFailures;
import dev.inbox.spi.AbortedTransactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;

/**
 * Before the listener's transaction commits, refuses one that an SQL error aborted (the listener
 * caught the error without rolling back to a savepoint), so that it rolls back as a failure; after
 * a rollback, counts the failed attempt of the message that failed, so that a poison message
 * reaches {@code GAVE_UP}. Nothing else is written before the commit: the claim wrote each new
 * key's record {@code COMPLETED} in the listener's transaction, and a listener stores no result.
 *
 * <p>A failure that says nothing about the message (a deadlock, a lock wait past the timeout, a
 * lost connection: {@link TransientFailures}) is not counted. In a batch, only the message the
 * failure names is counted; a batch listener that fails without naming one has no attempt counted,
 * and the container's batch error handling decides.
 */
final class Completion implements TransactionSynchronization {
  private static final Logger log = LoggerFactory.getLogger(Completion.class);

  private final Inbox inbox;
  private final Connection transaction;
  private final Delivery delivery;
  private final List<Claim> claims;
  private final int[] deliveryIndexOfArgument;
  private Throwable failure;
  private boolean nacked;

  Completion(
      Inbox inbox,
      Connection transaction,
      Delivery delivery,
      List<Claim> claims,
      int[] deliveryIndexOfArgument) {
    this.inbox = inbox;
    this.transaction = transaction;
    this.delivery = delivery;
    this.claims = claims;
    this.deliveryIndexOfArgument = deliveryIndexOfArgument;
  }

  void failedWith(Throwable failure) {
    this.failure = failure;
  }

  /**
   * The listener negatively acknowledged: its transaction rolls back and the container delivers the
   * message again, with no attempt counted (as Spring Kafka's nack does not use the error handler's
   * back-off).
   */
  void nacked() {
    this.nacked = true;
  }

  /**
   * No round trip with pgjdbc, which knows the transaction's state from the server's last reply.
   */
  @Override
  public void beforeCommit(boolean readOnly) {
    boolean aborted;
    try {
      aborted = AbortedTransactions.isAborted(transaction);
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          delivery.scope(),
          null,
          "checking the listener's transaction before its commit failed",
          e);
    }
    if (aborted) {
      throw new InboxDatabaseException(
          delivery.scope(),
          null,
          "the listener's transaction cannot commit",
          new SQLException(
              "the listener returned normally, but an SQL error it caught had aborted its"
                  + " transaction, so none of its writes can commit; roll back to a savepoint after"
                  + " an error the listener means to survive, or let the error propagate",
              "25P02"));
    }
  }

  @Override
  public void afterCompletion(int status) {
    if (status != STATUS_ROLLED_BACK
        || (nacked && failure == null)
        || (failure != null && TransientFailures.isTransient(failure))) {
      return;
    }
    String error =
        failure == null ? "the listener's transaction rolled back" : String.valueOf(failure);
    if (!delivery.batch()) {
      count(claims.get(0), error);
      return;
    }
    int failed = failure == null ? -1 : delivery.failedIndex(failure, deliveryIndexOfArgument);
    int argument = failed < 0 ? -1 : Arrays.binarySearch(deliveryIndexOfArgument, failed);
    if (argument >= 0) {
      count(claims.get(argument), error);
    } else {
      log.debug(
          "batch in scope '{}' rolled back without naming its failing message; no attempt counted",
          delivery.scope());
    }
  }

  /**
   * Counts on the listener's connection, whose transaction has just rolled back. Under a
   * transaction manager that completes the synchronizations before the DataSource's transaction has
   * ended (a {@code ChainedTransactionManager} that lists the DataSource's manager first, say) the
   * connection still holds that transaction, which the count must not commit: the attempt then goes
   * uncounted, and says so.
   */
  private void count(Claim claim, String error) {
    try {
      inbox.recordFailure(transaction, claim, error);
    } catch (IllegalStateException stillInATransaction) {
      log.warn(
          "the failed attempt of key '{}' in scope '{}' is not counted: the listener's DataSource"
              + " transaction was still open after its transaction synchronizations completed (a"
              + " chained transaction manager?), so max-attempts cannot stop this message; let the"
              + " DataSource's transaction manager own the listener's transaction: {}",
          claim.key(),
          claim.scope(),
          stillInATransaction.getMessage());
    }
  }
}
