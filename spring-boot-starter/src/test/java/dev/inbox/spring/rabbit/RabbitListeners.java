package dev.inbox.spring.rabbit;

import com.rabbitmq.client.Channel;
import dev.inbox.NonRetryableException;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** Plain {@code @RabbitListener} methods with {@code @Transactional}, counting their calls. */
@Component
public class RabbitListeners {
  final JdbcTemplate jdbc;
  final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

  public RabbitListeners(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
    jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_rabbit");
    jdbc.execute("CREATE TABLE IF NOT EXISTS boot_rabbit.effects (listener text, key text)");
  }

  @Transactional
  @RabbitListener(queues = "${test.queue.payments}")
  public void onPayment(String payload) {
    effect("payments", payload);
  }

  @Transactional
  @RabbitListener(queues = "${test.queue.storm}", concurrency = "8")
  public void onStorm(String payload) {
    effect("storm", payload);
  }

  @Transactional
  @RabbitListener(queues = "${test.queue.poison}")
  public void onPoison(String payload) {
    effect("poison", payload);
    if (payload.startsWith("swallow")) {
      // Catches the SQL error without a savepoint and returns normally: the transaction is
      // aborted, so its commit must fail rather than report the message handled.
      try {
        jdbc.execute("SELECT 1 / 0");
      } catch (RuntimeException e) {
        return;
      }
    }
    throw new IllegalStateException("payment " + payload + " cannot be booked");
  }

  /** Refuses a payment by policy: not retryable, dead-lettered at once. */
  @Transactional
  @RabbitListener(queues = "${test.queue.strict}")
  public void onStrict(String payload) {
    effect("strict", payload);
    if (payload.startsWith("refuse")) {
      throw new NonRetryableException("payment " + payload + " is refused by policy");
    }
  }

  /** Manual acknowledgement: the listener acknowledges its own messages; the inbox, duplicates. */
  @Transactional
  @RabbitListener(queues = "${test.queue.manual}", ackMode = "MANUAL")
  public void onManual(
      String payload, Channel channel, @Header(AmqpHeaders.DELIVERY_TAG) long deliveryTag)
      throws IOException {
    effect("manual", payload);
    channel.basicAck(deliveryTag, false);
  }

  /**
   * The default AUTO ack mode with the {@link Channel} as a parameter: the container acknowledges,
   * duplicates included, and the listener never does.
   */
  @Transactional
  @RabbitListener(queues = "${test.queue.auto-channel}")
  public void onAutoWithChannel(String payload, Channel channel) {
    effect("auto-channel", payload);
  }

  private void effect(String listener, String payload) {
    calls.computeIfAbsent(listener, l -> new AtomicInteger()).incrementAndGet();
    jdbc.update("INSERT INTO boot_rabbit.effects (listener, key) VALUES (?, ?)", listener, payload);
  }

  int calls(String listener) {
    AtomicInteger count = calls.get(listener);
    return count == null ? 0 : count.get();
  }
}
