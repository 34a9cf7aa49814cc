package dev.inbox.spring.internal;

import dev.inbox.Claim;
import dev.inbox.Inbox;
import dev.inbox.TransientFailures;
import java.sql.Connection;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;

/**
 * Completes the new keys of a delivery in the listener's transaction just before it commits, so
 * that no listener can forget it; after a rollback, counts the failed attempt of the message that
 * failed, so that a poison message reaches {@code GAVE_UP}. A commit that somehow skips {@link
 * #beforeCommit} still cannot double an effect: the claimed rows commit as they are, and a
 * redelivery finds them as duplicates.
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

  @Override
  public void beforeCommit(boolean readOnly) {
    for (Claim claim : claims) {
      inbox.complete(transaction, claim, null);
    }
  }

  @Override
  public void afterCompletion(int status) {
    if (status != STATUS_ROLLED_BACK
        || (failure != null && TransientFailures.isTransient(failure))) {
      return;
    }
    String error =
        failure == null ? "the listener's transaction rolled back" : String.valueOf(failure);
    if (!delivery.batch()) {
      inbox.recordFailure(claims.get(0), error);
      return;
    }
    int failed = failure == null ? -1 : delivery.failedIndex(failure, deliveryIndexOfArgument);
    int argument = failed < 0 ? -1 : Arrays.binarySearch(deliveryIndexOfArgument, failed);
    if (argument >= 0) {
      inbox.recordFailure(claims.get(argument), error);
    } else {
      log.debug(
          "batch in scope '{}' rolled back without naming its failing message; no attempt counted",
          delivery.scope());
    }
  }
}
