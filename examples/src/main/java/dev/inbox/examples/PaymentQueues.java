package dev.inbox.examples;

import com.rabbitmq.client.Channel;
import dev.inbox.rabbit.RabbitTopology;
import java.io.IOException;

/** The payments queue with its dead-letter exchange and queue. */
final class PaymentQueues {
  private PaymentQueues() {}

  static RabbitTopology.Names declare(Channel channel, String queue) throws IOException {
    if (isRabbitMq(channel)) {
      return RabbitTopology.declareWithDeadLetter(channel, queue);
    }
    // The embedded Qpid broker refuses x-dead-letter-exchange; the consumer is given the exchange
    // and publishes its dead letters there itself.
    RabbitTopology.Names names = RabbitTopology.declareDeadLetterTargets(channel, queue);
    channel.queueDeclare(queue, true, false, false, null);
    return names;
  }

  static boolean isRabbitMq(Channel channel) {
    Object product = channel.getConnection().getServerProperties().get("product");
    return product != null && product.toString().contains("RabbitMQ");
  }
}
