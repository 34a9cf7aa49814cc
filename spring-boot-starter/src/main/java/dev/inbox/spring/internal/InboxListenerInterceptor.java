package dev.inbox.spring.internal;

import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.DeadLetterReason;
import dev.inbox.Inbox;
import dev.inbox.spi.BatchClaims;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spring.DeliveryRejectedException;
import dev.inbox.spring.KeyInProgressException;
import dev.inbox.spring.ListenerRolledBackException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Runs just inside a listener method's {@code @Transactional}: claims the keys of the container's
 * current {@link Delivery} in that transaction (each new key's record written {@code COMPLETED}, to
 * commit with the method's writes), calls the method for the new messages only, and registers a
 * {@link Completion} that refuses to commit an aborted transaction and counts a failed attempt
 * after a rollback. A method that throws, a checked exception included, has its transaction rolled
 * back; one that returns with its transaction marked rollback-only fails with a {@link
 * ListenerRolledBackException}: either way the container handles the message as failed and nothing
 * of it commits.
 *
 * <p>A duplicate is not passed to the method (a record listener is not called; a batch listener
 * gets its list arguments without the duplicates), and the container acknowledges it as handled (in
 * a manual ack mode, where the listener acknowledges only what it is given, the inbox does). A key
 * that gave up or mismatches is a {@link DeliveryRejectedException} (not retryable: the error
 * handler's recoverer gets it); one held elsewhere is a {@link KeyInProgressException} (retried).
 * In a batch, these are raised after the new messages committed, naming the first such message, so
 * that the container settles the batch up to it and delivers the rest again.
 */
public final class InboxListenerInterceptor implements MethodInterceptor {
  private final Supplier<Inbox> inboxes;
  private final Supplier<CallerTransactions> callerTransactions;

  /** Suppliers, since listener beans are advised before the inbox bean need exist. */
  public InboxListenerInterceptor(
      Supplier<Inbox> inboxes, Supplier<CallerTransactions> callerTransactions) {
    this.inboxes = inboxes;
    this.callerTransactions = callerTransactions;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Delivery delivery = CurrentDelivery.get();
    if (delivery == null) {
      // Called by the application itself, not by a listener container: nothing to claim.
      return invocation.proceed();
    }
    Inbox inbox = inboxes.get();
    Connection transaction = callerTransactions.get().current();
    if (transaction == null) {
      throw new IllegalStateException(
          "listener method "
              + invocation.getMethod()
              + " runs without a transaction on the inbox's DataSource; its @Transactional must use"
              + " that DataSource's transaction manager (a DataSourceTransactionManager or"
              + " JpaTransactionManager), so that its writes commit with the inbox key");
    }
    List<Delivery.Message> messages = delivery.messages();
    Claim[] claimed = claimAll(inbox, transaction, delivery.scope(), messages);
    List<Claim> newClaims = new ArrayList<>();
    int[] newIndexes = new int[messages.size()];
    int[] duplicateIndexes = new int[messages.size()];
    int duplicates = 0;
    int firstUnsettled = -1;
    RuntimeException unsettled = null;
    for (int i = 0; i < messages.size(); i++) {
      Delivery.Message message = messages.get(i);
      RuntimeException refusal;
      if (message.invalidKey() != null) {
        refusal =
            new DeliveryRejectedException(
                DeadLetterReason.INVALID_KEY,
                delivery.scope(),
                null,
                "message " + i + " has no valid inbox key: " + message.invalidKey());
      } else {
        Claim claim = claimed[i];
        refusal = refusal(claim);
        if (claim.outcome() == ClaimOutcome.NEW) {
          newIndexes[newClaims.size()] = i;
          newClaims.add(claim);
        } else if (claim.outcome() == ClaimOutcome.DUPLICATE) {
          duplicateIndexes[duplicates++] = i;
        }
      }
      if (refusal instanceof DeliveryRejectedException) {
        delivery.refused(i, refusal);
      }
      if (refusal != null && unsettled == null) {
        firstUnsettled = i;
        unsettled = refusal;
        if (!delivery.batch()) {
          throw refusal;
        }
      }
    }
    if (newClaims.isEmpty() && unsettled == null) {
      delivery.acknowledgeSkipped(invocation.getArguments());
      return null;
    }
    if (delivery.batch() && duplicates > 0) {
      // A duplicate is settled already (its key committed elsewhere): acknowledged whatever becomes
      // of the rest of the batch.
      delivery.acknowledgeDuplicates(Arrays.copyOf(duplicateIndexes, duplicates));
    }
    if (newClaims.isEmpty()) {
      throw delivery.failedAt(firstUnsettled, unsettled);
    }
    int[] deliveryIndexOfArgument = Arrays.copyOf(newIndexes, newClaims.size());
    if (delivery.batch() && newClaims.size() < messages.size()) {
      keepOnly(invocation, messages.size(), deliveryIndexOfArgument);
    }
    Completion completion =
        new Completion(inbox, transaction, delivery, newClaims, deliveryIndexOfArgument);
    TransactionSynchronizationManager.registerSynchronization(completion);
    int firstUncommitted =
        unsettled == null
            ? deliveryIndexOfArgument[0]
            : Math.min(firstUnsettled, deliveryIndexOfArgument[0]);
    boolean[] nacked = new boolean[1];
    Object[] arguments = invocation.getArguments();
    Object[] guarded =
        delivery.guardAcknowledgments(
            arguments,
            deliveryIndexOfArgument,
            firstUncommitted,
            () -> {
              nacked[0] = true;
              completion.nacked();
              setRollbackOnly();
            });
    if (guarded != arguments) {
      keepWhatTheMethodCannotTake(invocation.getMethod(), arguments, guarded);
      setArguments(invocation, guarded);
    }
    try {
      Object result = invocation.proceed();
      if (nacked[0]) {
        // Rolled back without an exception: the container acts on the nack, delivering the
        // message again, which must find its key unclaimed.
        return result;
      }
      if (rollbackOnly()) {
        throw new ListenerRolledBackException(invocation.getMethod());
      }
      if (unsettled != null) {
        registerAfterCommit(delivery.failedAt(firstUnsettled, unsettled));
      }
      return result;
    } catch (Throwable failure) {
      // The container handles the message as failed whatever the exception, so nothing of the
      // method may commit: a checked exception would otherwise commit the key (Spring's default
      // rollback rule) and the message's retry would be answered DUPLICATE, never run again.
      setRollbackOnly();
      completion.failedWith(failure);
      throw delivery.renumbered(failure, deliveryIndexOfArgument, firstUncommitted);
    }
  }

  /**
   * Puts back the container's own argument where the method declares a type the inbox's stand-in is
   * not (a Spring implementation of RabbitMQ's {@code Channel}, say): that listener acknowledges at
   * once, inside its transaction, as without the inbox, rather than failing on every message.
   */
  private static void keepWhatTheMethodCannotTake(
      Method method, Object[] arguments, Object[] guarded) {
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < guarded.length && i < types.length; i++) {
      if (guarded[i] != arguments[i] && !types[i].isInstance(guarded[i])) {
        guarded[i] = arguments[i];
      }
    }
  }

  private static void setArguments(MethodInvocation invocation, Object[] arguments) {
    if (!(invocation instanceof ProxyMethodInvocation proxied)) {
      throw new IllegalStateException(
          "cannot hand "
              + invocation.getMethod()
              + " the inbox's acknowledgement, which indicates a bug");
    }
    proxied.setArguments(arguments);
  }

  /**
   * Claims the key of every message that has a valid one, in one batch claim on the listener's
   * transaction (a few round trips for the whole batch, not one per message); null for the others.
   */
  private static Claim[] claimAll(
      Inbox inbox, Connection transaction, String scope, List<Delivery.Message> messages) {
    List<String> keys = new ArrayList<>(messages.size());
    List<byte[]> fingerprints = new ArrayList<>(messages.size());
    for (Delivery.Message message : messages) {
      if (message.invalidKey() == null) {
        keys.add(message.key());
        fingerprints.add(message.fingerprint());
      }
    }
    Claim[] byMessage = new Claim[messages.size()];
    if (keys.isEmpty()) {
      return byMessage;
    }
    List<Claim> claims = BatchClaims.of(inbox).claimAll(transaction, scope, keys, fingerprints);
    int next = 0;
    for (int i = 0; i < messages.size(); i++) {
      if (messages.get(i).invalidKey() == null) {
        byMessage[i] = claims.get(next++);
      }
    }
    return byMessage;
  }

  /**
   * Whether the method's {@code @Transactional} transaction will roll back. A transaction the
   * container began (no transaction interceptor around the method) is not seen here; the container
   * rolls it back on any exception.
   */
  private static boolean rollbackOnly() {
    try {
      return TransactionAspectSupport.currentTransactionStatus().isRollbackOnly();
    } catch (NoTransactionException e) {
      return false;
    }
  }

  private static void setRollbackOnly() {
    try {
      TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
    } catch (NoTransactionException e) {
      // The container's own transaction: it rolls back on the exception.
    }
  }

  static RuntimeException refusal(Claim claim) {
    return switch (claim.outcome()) {
      case NEW, DUPLICATE -> null;
      case IN_PROGRESS -> new KeyInProgressException(claim.scope(), claim.key());
      case MISMATCH ->
          rejected(
              DeadLetterReason.MISMATCH,
              claim,
              "was used before with a different payload (fingerprint mismatch); send a new message"
                  + " with a new key");
      case GAVE_UP ->
          rejected(
              DeadLetterReason.GAVE_UP,
              claim,
              "gave up after "
                  + claim.attempts()
                  + " failed attempts; release it with InboxAdmin.release to process it again");
    };
  }

  private static DeliveryRejectedException rejected(
      DeadLetterReason reason, Claim claim, String what) {
    return new DeliveryRejectedException(
        reason,
        claim.scope(),
        claim.key(),
        claim.attempts(),
        "key '" + claim.key() + "' in scope '" + claim.scope() + "' " + what);
  }

  /**
   * Hands a batch listener only the new messages: every list argument of the delivery's size is one
   * element per message (the records, the payloads, a header's values) and is cut alike.
   */
  private static void keepOnly(MethodInvocation invocation, int size, int[] keep) {
    if (!(invocation instanceof ProxyMethodInvocation proxied)) {
      throw new IllegalStateException(
          "cannot leave duplicates out of the arguments of "
              + invocation.getMethod()
              + ", which indicates a bug");
    }
    Object[] arguments = proxied.getArguments().clone();
    boolean cut = false;
    for (int a = 0; a < arguments.length; a++) {
      if (arguments[a] instanceof List<?> list && list.size() == size) {
        List<Object> kept = new ArrayList<>(keep.length);
        for (int index : keep) {
          kept.add(list.get(index));
        }
        arguments[a] = kept;
        cut = true;
      }
    }
    if (!cut) {
      throw new IllegalStateException(
          "batch listener "
              + invocation.getMethod()
              + " takes no List with one element per record, so the inbox cannot leave the"
              + " duplicates out; take a List<ConsumerRecord<K, V>> or a List of payloads");
    }
    proxied.setArguments(arguments);
  }

  /** Raised once the new messages committed, so that the container moves on up to the first. */
  private static void registerAfterCommit(RuntimeException failure) {
    TransactionSynchronizationManager.registerSynchronization(
        new TransactionSynchronization() {
          @Override
          public void afterCommit() {
            throw failure;
          }
        });
  }
}
