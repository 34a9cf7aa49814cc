package dev.inbox.spring.rabbit;

import dev.inbox.testing.TestRabbit;
import java.net.URI;
import org.springframework.test.context.DynamicPropertyRegistry;

/** Points Boot's {@code spring.rabbitmq.*} at the tests' RabbitMQ. */
final class RabbitConnection {
  private RabbitConnection() {}

  static void register(DynamicPropertyRegistry registry) {
    // Boot reads the virtual host of an address as it is, so "%2F" is passed decoded.
    URI amqp = URI.create(TestRabbit.shared().uri());
    String[] credentials = amqp.getUserInfo().split(":", 2);
    registry.add("spring.rabbitmq.host", amqp::getHost);
    registry.add("spring.rabbitmq.port", () -> amqp.getPort() < 0 ? 5672 : amqp.getPort());
    registry.add("spring.rabbitmq.username", () -> credentials[0]);
    registry.add("spring.rabbitmq.password", () -> credentials[1]);
    registry.add(
        "spring.rabbitmq.virtual-host",
        () ->
            amqp.getPath() == null || amqp.getPath().length() <= 1
                ? "/"
                : amqp.getPath().substring(1));
  }
}
