package dev.inbox.spring.internal;

import dev.inbox.InboxKeys;
import java.util.List;

/**
 * What a listener container is delivering on this thread, seen the same way for every transport:
 * the scope, and per message its key and payload fingerprint. A record listener gets one message, a
 * batch listener several, in the order the listener's list arguments hold them.
 */
public interface Delivery {

  /** The scope the keys are claimed in: the consumer group, the queue. */
  String scope();

  /** The messages, in delivery order. */
  List<Message> messages();

  /** Whether the listener takes the messages as a list (a batch listener). */
  boolean batch();

  /**
   * The exception that makes the container settle a batch up to the message at {@code index} and
   * deliver that one again, or hand it to its recoverer, with {@code cause} (Kafka's {@code
   * BatchListenerFailedException}).
   */
  RuntimeException failedAt(int index, RuntimeException cause);

  /**
   * The index in this delivery of the message a batch listener's failure names (the listener threw
   * Kafka's {@code BatchListenerFailedException}, say), or -1 when it names none. The listener was
   * given the messages {@code deliveryIndexOfArgument} lists (its list arguments' element {@code i}
   * is message {@code deliveryIndexOfArgument[i]}).
   */
  int failedIndex(Throwable failure, int[] deliveryIndexOfArgument);

  /**
   * The listener's failure as the container is to see it: one that names a message (by its index in
   * the list the listener was given, or itself) names it in the whole delivery, and names none
   * after {@code firstUncommitted}, the first message of the delivery that the failure leaves
   * unsettled (given to the listener, or refused by the inbox). A container that settles a batch up
   * to the message a failure names (Kafka's {@code DefaultErrorHandler} commits the offsets before
   * it) would otherwise settle messages whose writes rolled back with the listener's transaction.
   * Anything else is returned as is.
   */
  Throwable renumbered(Throwable failure, int[] deliveryIndexOfArgument, int firstUncommitted);

  /**
   * The listener's arguments with its acknowledgement handle (Kafka's {@code Acknowledgment})
   * replaced by one that acknowledges only after the listener's transaction committed, speaks of
   * the messages by their index in the whole delivery, and on a negative acknowledgement runs
   * {@code nacked} (which rolls the transaction back) and has the delivery redelivered from {@code
   * firstUncommitted}; the arguments as they are where there is none to replace.
   */
  default Object[] guardAcknowledgments(
      Object[] arguments, int[] deliveryIndexOfArgument, int firstUncommitted, Runnable nacked) {
    return arguments;
  }

  /**
   * Acknowledges a delivery whose listener was not called (all duplicates), where the listener
   * acknowledges itself (manual ack modes); a no-op where the container acknowledges.
   */
  void acknowledgeSkipped(Object[] listenerArguments);

  /**
   * Acknowledges the duplicates a batch listener is not given (the messages at these indexes),
   * where the listener acknowledges only the messages it is given; a no-op where the container or
   * one acknowledgement of the whole batch settles them. Either way they are settled: a recoverer
   * of the batch, should the listener fail, dead-letters none of them.
   */
  void acknowledgeDuplicates(int[] indexes);

  /**
   * The inbox refuses the message at {@code index} (its key gave up or mismatches, or it has none):
   * it is not given to the listener, and goes to the recoverer with this refusal. A no-op where the
   * container settles a batch up to the message it names ({@link #failedAt}) and delivers the rest
   * again; RabbitMQ settles a batch as a whole, so its recoverer needs every refused message.
   */
  default void refused(int index, RuntimeException refusal) {}

  /**
   * One message: its key and its payload fingerprint (null: none), or, when no valid key could be
   * found for it, what is wrong with it (the key is then null).
   */
  record Message(String key, byte[] fingerprint, String invalidKey) {
    /**
     * A message with this key, or an invalid one when the key breaks a rule of {@link
     * InboxKeys#brokenRule} (empty, blank, a control character, too long): refused alone, where the
     * batch's claim would refuse the whole batch for it.
     */
    public static Message of(String key, byte[] fingerprint) {
      String broken = InboxKeys.brokenRule(key);
      if (broken != null) {
        return invalid("the message's key " + broken);
      }
      return new Message(key, fingerprint, null);
    }

    public static Message invalid(String problem) {
      return new Message(null, null, problem);
    }
  }
}
