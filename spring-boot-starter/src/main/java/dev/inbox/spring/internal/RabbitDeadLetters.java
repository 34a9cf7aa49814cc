package dev.inbox.spring.internal;

import dev.inbox.Inbox;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.amqp.core.Message;

/**
 * The inbox's dead-letter headers of a RabbitMQ message ({@link DeadLetterCause}), its scope the
 * queue it was consumed from and its key found as {@link RabbitDelivery} finds it; and, for a
 * recoverer, which messages of the current delivery to dead-letter and their acknowledgement.
 */
public final class RabbitDeadLetters {
  private final DeadLetterCause causes;

  public RabbitDeadLetters(Supplier<Inbox> inbox) {
    this.causes = new DeadLetterCause(inbox);
  }

  /** A message to dead-letter, with the failure its headers tell of. */
  public record DeadLetter(Message message, Throwable cause) {}

  /**
   * What to dead-letter of a consumer batch that a recoverer got with {@code failure}: the messages
   * the inbox refused, each with its own refusal, when the failure is a refusal; otherwise every
   * message but the duplicates the inbox acknowledged. All of them when the batch is not the
   * current delivery (the recoverer was called outside a container).
   */
  public static List<DeadLetter> ofBatch(List<Message> batch, Throwable failure) {
    if (CurrentDelivery.get() instanceof RabbitDelivery delivery && delivery.delivers(batch)) {
      return delivery.deadLetters(failure);
    }
    List<DeadLetter> deadLetters = new ArrayList<>(batch.size());
    for (Message message : batch) {
      deadLetters.add(new DeadLetter(message, failure));
    }
    return deadLetters;
  }

  /**
   * Acknowledges a message that a recoverer republished, when it is one of the current delivery's
   * and the container is in MANUAL mode (in AUTO mode the container acknowledges it).
   */
  public static void acknowledgeRepublished(Message message) {
    deliveryOf(message).ifPresent(delivery -> delivery.acknowledgeRepublished(message));
  }

  /**
   * Acknowledges a message that a recoverer republished before a later dead letter of its batch
   * failed, when it is one of the current delivery's: the container requeues the batch on that
   * failure, and this message must not be dead-lettered again.
   */
  public static void acknowledgeRepublishedBeforeFailure(Message message) {
    deliveryOf(message)
        .ifPresent(delivery -> delivery.acknowledgeRepublishedBeforeFailure(message));
  }

  /**
   * Requeues a message whose dead letter failed, when it is one of the current delivery's and the
   * container is in MANUAL mode (in AUTO mode the container requeues it on the exception).
   */
  public static void requeueUnrepublished(Message message) {
    deliveryOf(message).ifPresent(delivery -> delivery.requeueUnrepublished(message));
  }

  /** The current delivery, when the message is one of its. */
  private static Optional<RabbitDelivery> deliveryOf(Message message) {
    return CurrentDelivery.get() instanceof RabbitDelivery delivery
            && delivery.delivers(List.of(message))
        ? Optional.of(delivery)
        : Optional.empty();
  }

  public Map<String, Object> headers(Message message, Throwable failure) {
    return causes.headers(
        failure,
        () -> message.getMessageProperties().getConsumerQueue(),
        () -> new RabbitDelivery(null, List.of(message), false, null).messages().get(0).key());
  }
}
