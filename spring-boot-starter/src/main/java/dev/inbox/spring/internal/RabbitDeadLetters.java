package dev.inbox.spring.internal;

import dev.inbox.Inbox;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.amqp.core.Message;

/**
 * The inbox's dead-letter headers of a RabbitMQ message ({@link DeadLetterCause}), its scope the
 * queue it was consumed from and its key found as {@link RabbitDelivery} finds it.
 */
public final class RabbitDeadLetters {
  private final DeadLetterCause causes;

  public RabbitDeadLetters(Supplier<Inbox> inbox) {
    this.causes = new DeadLetterCause(inbox);
  }

  public Map<String, Object> headers(Message message, Throwable failure) {
    return causes.headers(
        failure,
        () -> message.getMessageProperties().getConsumerQueue(),
        () -> new RabbitDelivery(null, List.of(message), false, null).messages().get(0).key());
  }
}
