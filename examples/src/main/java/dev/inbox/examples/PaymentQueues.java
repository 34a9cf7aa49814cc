package dev.inbox.examples;

import com.rabbitmq.client.Channel;
import dev.inbox.rabbit.RabbitTopology;
import java.io.IOException;

/** The payments queue with its dead-letter exchange and queue. */
final class PaymentQueues {
  private PaymentQueues() {}

  static RabbitTopology.Names declare(Channel channel, String queue) throws IOException {
    return RabbitTopology.declareWithDeadLetter(channel, queue);
  }
}
