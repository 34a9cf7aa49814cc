package dev.inbox.spring.rabbit;

import dev.inbox.Inbox;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The topology of the tests of refused messages under MANUAL ack mode: the queue {@code
 * test.queue.refused}, not auto-deleted so that it keeps its messages while its container is
 * stopped, and the dead-letter queue {@code test.queue.refused-dead} that an {@link
 * InboxRepublishMessageRecoverer}, the application's {@code MessageRecoverer}, republishes to.
 */
@Configuration(proxyBeanMethods = false)
class RefusedTopology {
  @Bean
  Queue refused(@Value("${test.queue.refused}") String name) {
    return QueueBuilder.nonDurable(name).expires(600_000).build();
  }

  @Bean
  Queue refusedDeadLetters(@Value("${test.queue.refused-dead}") String name) {
    return QueueBuilder.nonDurable(name).expires(600_000).build();
  }

  @Bean
  MessageRecoverer republishToDeadLetters(
      RabbitTemplate template, Inbox inbox, @Value("${test.queue.refused-dead}") String name) {
    return new InboxRepublishMessageRecoverer(template, "", name, inbox);
  }

  @Bean
  ClaimCounter claimCounter() {
    return new ClaimCounter();
  }

  /** The effects table the listeners write to, one row per message they handle. */
  static void createEffects(JdbcTemplate jdbc) {
    jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_rabbit");
    jdbc.execute("CREATE TABLE IF NOT EXISTS boot_rabbit.effects (listener text, key text)");
  }
}
