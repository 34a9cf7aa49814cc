package dev.inbox.spring.internal;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.LongString;
import dev.inbox.InboxKeys;
import dev.inbox.InvalidKeyException;
import dev.inbox.internal.Fingerprints;
import dev.inbox.spring.DeliveryRejectedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The messages a Spring AMQP container hands to a listener: the key is the {@code messageId}
 * property, else the {@code idempotency-key} header read as an HTTP Idempotency-Key (the
 * rabbit-adapter's rule), the scope is the queue, and the body is fingerprinted.
 */
final class RabbitDelivery implements Delivery {
  static final String KEY_HEADER = "idempotency-key";

  private final Channel channel;
  private final List<org.springframework.amqp.core.Message> amqpMessages;
  private final boolean batch;
  private final RabbitAcknowledgeModes acknowledgeModes;
  // The delivery tags the inbox acknowledged: a retry interceptor calls the listener again with
  // this same delivery, and a second acknowledgement of a tag closes the channel.
  private final Set<Long> acknowledged = new HashSet<>();
  // The delivery tags of the batch's duplicates, settled before the listener ran whatever the ack
  // mode: in AUTO mode the container acknowledges them only with the batch, and a recoverer handed
  // the failed batch must not dead-letter a message whose key committed.
  private final Set<Long> duplicates = new HashSet<>();
  // The messages the inbox refused, by index, each with its refusal: the container hands a
  // recoverer a consumer batch as a whole, and only these are its to dead-letter.
  private final Map<Integer, RuntimeException> refused = new TreeMap<>();

  RabbitDelivery(
      Channel channel,
      List<org.springframework.amqp.core.Message> amqpMessages,
      boolean batch,
      RabbitAcknowledgeModes acknowledgeModes) {
    this.channel = channel;
    this.amqpMessages = amqpMessages;
    this.batch = batch;
    this.acknowledgeModes = acknowledgeModes;
  }

  @Override
  public String scope() {
    String queue = amqpMessages.get(0).getMessageProperties().getConsumerQueue();
    if (queue == null) {
      throw new IllegalStateException(
          "the inbox's scope for a @RabbitListener is its queue, and the container named none,"
              + " which indicates a bug");
    }
    return queue;
  }

  @Override
  public List<Delivery.Message> messages() {
    List<Delivery.Message> messages = new ArrayList<>(amqpMessages.size());
    for (org.springframework.amqp.core.Message message : amqpMessages) {
      messages.add(message(message));
    }
    return messages;
  }

  private static Delivery.Message message(org.springframework.amqp.core.Message message) {
    byte[] fingerprint = Fingerprints.ofMessage(message.getBody());
    String messageId = message.getMessageProperties().getMessageId();
    Object header = message.getMessageProperties().getHeader(KEY_HEADER);
    if (messageId == null && header == null) {
      return Delivery.Message.invalid(
          "the message has neither a messageId nor an '" + KEY_HEADER + "' header");
    }
    try {
      return Delivery.Message.of(
          messageId != null ? wholeUtf8(messageId, "messageId") : keyOf(header), fingerprint);
    } catch (RuntimeException e) {
      return Delivery.Message.invalid(String.valueOf(e.getMessage()));
    }
  }

  /**
   * The key an {@code idempotency-key} header names, as Spring AMQP's message properties converter
   * left it: a byte array (an AMQP byte array) or a {@link LongString} (longer than the converter's
   * limit) is decoded as strict UTF-8; a shorter AMQP string arrives already decoded, leniently,
   * with U+FFFD in place of every malformed sequence, so a key with U+FFFD is refused ({@link
   * #wholeUtf8}).
   */
  private static String keyOf(Object header) {
    if (header instanceof byte[] bytes) {
      return InboxKeys.fromIdempotencyKeyHeaderBytes(bytes);
    }
    if (header instanceof LongString longString) {
      return InboxKeys.fromIdempotencyKeyHeaderBytes(longString.getBytes());
    }
    return InboxKeys.fromIdempotencyKeyHeader(wholeUtf8(header.toString(), KEY_HEADER));
  }

  /**
   * The text, refused when it holds U+FFFD: the AMQP client and Spring AMQP decode strings
   * leniently, so U+FFFD stands for bytes that were not UTF-8, and different such bytes would make
   * one key.
   */
  private static String wholeUtf8(String text, String field) {
    if (text.indexOf('\uFFFD') >= 0) {
      throw new InvalidKeyException(
          "key",
          text,
          "must not contain U+FFFD: the "
              + field
              + " had bytes that were not UTF-8, which the AMQP client decoded as U+FFFD");
    }
    return text;
  }

  @Override
  public boolean batch() {
    return batch;
  }

  /** A RabbitMQ batch has no partial acknowledgement: the whole batch fails with the cause. */
  @Override
  public RuntimeException failedAt(int index, RuntimeException cause) {
    return cause;
  }

  @Override
  public int failedIndex(Throwable failure, int[] deliveryIndexOfArgument) {
    return -1;
  }

  @Override
  public Throwable renumbered(
      Throwable failure, int[] deliveryIndexOfArgument, int firstUncommitted) {
    return failure;
  }

  @Override
  public void refused(int index, RuntimeException refusal) {
    refused.put(index, refusal);
  }

  /** Whether these are this delivery's messages (by their delivery tags). */
  boolean delivers(List<org.springframework.amqp.core.Message> messages) {
    Set<Long> tags = new HashSet<>();
    for (org.springframework.amqp.core.Message message : amqpMessages) {
      tags.add(message.getMessageProperties().getDeliveryTag());
    }
    for (org.springframework.amqp.core.Message message : messages) {
      if (!tags.contains(message.getMessageProperties().getDeliveryTag())) {
        return false;
      }
    }
    return true;
  }

  /**
   * What a recoverer that got this whole delivery with {@code failure} is to dead-letter: the
   * messages the inbox refused, each with its own refusal, when the failure is a refusal (the new
   * messages committed and the duplicates are settled); otherwise (the listener failed, its writes
   * rolled back) every message but the duplicates, each refused one with its refusal and the others
   * with the failure.
   */
  List<RabbitDeadLetters.DeadLetter> deadLetters(Throwable failure) {
    List<RabbitDeadLetters.DeadLetter> deadLetters = new ArrayList<>();
    if (!refused.isEmpty()
        && DeadLetterCause.find(failure, DeliveryRejectedException.class) != null) {
      refused.forEach(
          (index, refusal) ->
              deadLetters.add(new RabbitDeadLetters.DeadLetter(amqpMessages.get(index), refusal)));
      return deadLetters;
    }
    for (int i = 0; i < amqpMessages.size(); i++) {
      org.springframework.amqp.core.Message message = amqpMessages.get(i);
      long tag = message.getMessageProperties().getDeliveryTag();
      if (!acknowledged.contains(tag) && !duplicates.contains(tag)) {
        // A message the inbox refused goes with its refusal (its reason, its key's attempts), not
        // with the failure of a listener that never got it.
        Throwable cause = refused.containsKey(i) ? refused.get(i) : failure;
        deadLetters.add(new RabbitDeadLetters.DeadLetter(message, cause));
      }
    }
    return deadLetters;
  }

  /**
   * Acknowledges, in MANUAL mode, a message of this delivery that a recoverer republished: the
   * container acknowledges none in MANUAL mode and the listener never got a refused one (nor
   * acknowledged one it failed on), so it would stay unacknowledged until its channel closes, then
   * be delivered, refused and dead-lettered again. In AUTO mode the container acknowledges it.
   */
  void acknowledgeRepublished(org.springframework.amqp.core.Message message) {
    if (!acknowledgeModes.of(scope()).isManual()) {
      return;
    }
    try {
      acknowledge(message.getMessageProperties().getDeliveryTag());
    } catch (IOException e) {
      throw new UncheckedIOException("could not acknowledge a republished message", e);
    }
  }

  /**
   * Acknowledges a message of this delivery that a recoverer republished before a later dead letter
   * of the same batch failed. In AUTO mode the container answers that failure by requeueing the
   * whole batch, which would bring this message back to be dead-lettered a second time. Its tag is
   * below the failed message's, which stays unacknowledged for the container's negative
   * acknowledgement of the batch (multiple, up to the batch's last tag). In MANUAL mode it was
   * acknowledged when republished (once per tag); in NONE mode the broker needs none.
   */
  void acknowledgeRepublishedBeforeFailure(org.springframework.amqp.core.Message message) {
    if (acknowledgeModes.of(scope()).isAutoAck()) {
      return;
    }
    try {
      acknowledge(message.getMessageProperties().getDeliveryTag());
    } catch (IOException e) {
      throw new UncheckedIOException("could not acknowledge a republished message", e);
    }
  }

  /**
   * Gives back, in MANUAL mode, a message of this delivery whose dead letter could not be sent,
   * with a negative acknowledgement that requeues it: the container settles nothing in MANUAL mode,
   * so it would otherwise stay unacknowledged, and hold a place of the prefetch, until its channel
   * closes. In AUTO mode the container requeues it on the recoverer's exception.
   */
  void requeueUnrepublished(org.springframework.amqp.core.Message message) {
    if (!acknowledgeModes.of(scope()).isManual()) {
      return;
    }
    long tag = message.getMessageProperties().getDeliveryTag();
    try {
      if (acknowledged.add(tag)) {
        channel.basicNack(tag, false, true);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not requeue a message whose dead letter failed", e);
    }
  }

  /**
   * Acknowledges the skipped duplicates where the container does not: in MANUAL mode, where the
   * listener acknowledges the messages it is given. In AUTO mode the container acknowledges them
   * when the listener returns (a second acknowledgement of one delivery tag closes the channel:
   * "unknown delivery tag"), whether or not the listener takes the {@link Channel}; in NONE mode
   * the broker needs none.
   */
  @Override
  public void acknowledgeSkipped(Object[] listenerArguments) {
    int[] all = new int[amqpMessages.size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    acknowledgeDuplicates(all);
  }

  /**
   * One by one ({@code multiple} false: an earlier tag may be a new message the listener has yet to
   * settle), before the listener runs, so that a listener acknowledging its last tag with {@code
   * multiple} true never names a tag the inbox acknowledged.
   */
  @Override
  public void acknowledgeDuplicates(int[] indexes) {
    for (int index : indexes) {
      duplicates.add(amqpMessages.get(index).getMessageProperties().getDeliveryTag());
    }
    if (indexes.length == 0 || !acknowledgeModes.of(scope()).isManual()) {
      return;
    }
    try {
      for (int index : indexes) {
        acknowledge(amqpMessages.get(index).getMessageProperties().getDeliveryTag());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not acknowledge a duplicate", e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>In MANUAL mode the listener's {@link Channel} is replaced by one whose {@code basicAck} is
   * sent once the listener's transaction committed, and not at all when it rolled back: the
   * listener acknowledges inside its transaction, and a message acknowledged before a commit that
   * then fails (a serialization failure, a lost connection, an aborted transaction) would be gone
   * with its effect. Everything else, {@code basicNack} and {@code basicReject} included, goes
   * straight to the channel.
   */
  @Override
  public Object[] guardAcknowledgments(
      Object[] arguments, int[] deliveryIndexOfArgument, int firstUncommitted, Runnable nacked) {
    if (channel == null || !acknowledgeModes.of(scope()).isManual()) {
      return arguments;
    }
    Object[] guarded = null;
    for (int a = 0; a < arguments.length; a++) {
      if (arguments[a] == channel) {
        if (guarded == null) {
          guarded = arguments.clone();
        }
        guarded[a] = afterCommitAcks(channel);
      }
    }
    return guarded == null ? arguments : guarded;
  }

  private static Channel afterCommitAcks(Channel channel) {
    return (Channel)
        Proxy.newProxyInstance(
            Channel.class.getClassLoader(),
            new Class<?>[] {Channel.class},
            (proxy, method, args) -> {
              if (method.getName().equals("basicAck")
                  && args != null
                  && args.length == 2
                  && TransactionSynchronizationManager.isSynchronizationActive()) {
                long tag = (Long) args[0];
                boolean multiple = (Boolean) args[1];
                TransactionSynchronizationManager.registerSynchronization(
                    new TransactionSynchronization() {
                      @Override
                      public void afterCommit() {
                        try {
                          channel.basicAck(tag, multiple);
                        } catch (IOException e) {
                          throw new UncheckedIOException(
                              "could not acknowledge the listener's message after its commit", e);
                        }
                      }
                    });
                return null;
              }
              if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                  case "equals" -> proxy == args[0];
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "toString" -> "after-commit acknowledgements of " + channel;
                  default -> method.invoke(channel, args);
                };
              }
              try {
                return method.invoke(channel, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  /** Once per tag: a second acknowledgement of a delivery tag closes the channel. */
  private void acknowledge(long tag) throws IOException {
    if (acknowledged.add(tag)) {
      channel.basicAck(tag, false);
    }
  }
}
