package dev.inbox.rabbit;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.Map;

/**
 * Declares a durable queue with a dead-letter exchange and a dead-letter queue:
 *
 * <ul>
 *   <li>{@code <queue>.dlx}: a fanout exchange, the queue's {@code x-dead-letter-exchange}
 *   <li>{@code <queue>.dlq}: a durable queue bound to it, where rejected deliveries end up
 * </ul>
 *
 * Pass {@link Names#deadLetterExchange()} to {@link InboxRabbitConsumer.Builder#deadLetterExchange}
 * so that dead letters carry the inbox's reason headers.
 */
public final class RabbitTopology {
  private RabbitTopology() {}

  /** The names of a queue's dead-letter topology. */
  public record Names(String queue, String deadLetterExchange, String deadLetterQueue) {}

  public static Names names(String queue) {
    return new Names(queue, queue + ".dlx", queue + ".dlq");
  }

  /** Declares the three; idempotent when the queue already has the same arguments. */
  public static Names declareWithDeadLetter(Channel channel, String queue) throws IOException {
    Names names = declareDeadLetterTargets(channel, queue);
    channel.queueDeclare(
        queue, true, false, false, Map.of("x-dead-letter-exchange", names.deadLetterExchange()));
    return names;
  }

  /**
   * Declares only the dead-letter exchange and queue, for brokers that refuse {@code
   * x-dead-letter-exchange} (such as Apache Qpid Broker-J): the consumer then publishes its dead
   * letters to the exchange itself, and what the broker would dead-letter on its own (expiry,
   * length limits) is not caught.
   */
  public static Names declareDeadLetterTargets(Channel channel, String queue) throws IOException {
    Names names = names(queue);
    channel.exchangeDeclare(names.deadLetterExchange(), BuiltinExchangeType.FANOUT, true);
    channel.queueDeclare(names.deadLetterQueue(), true, false, false, null);
    channel.queueBind(names.deadLetterQueue(), names.deadLetterExchange(), "");
    return names;
  }
}
