package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;

/**
 * A MANUAL ack mode {@code @RabbitListener} acknowledges inside its {@code @Transactional} method,
 * so before the commit: when the commit then fails (here the inbox refuses a transaction that an
 * SQL error the listener swallowed had aborted; a serialization failure or a lost connection at
 * commit does the same), the message must not stay acknowledged, or its effect, rolled back, is
 * lost with it.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RefusedTopology.class,
      RabbitManualAckBeforeFailedCommitTest.AckingListener.class
    },
    properties = {"inbox.schema=boot_rabbit_manual_ack_commit"})
class RabbitManualAckBeforeFailedCommitTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-manual-ack-commit");
  private static final String DEAD_LETTERS = TestRabbit.newQueueName("boot-manual-ack-commit-dead");
  private static final String CONTAINER = "boot-manual-ack-commit";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.refused", () -> QUEUE);
    registry.add("test.queue.refused-dead", () -> DEAD_LETTERS);
  }

  /**
   * Books, acknowledges its message, then, on a key's first call, swallows an SQL error that
   * aborted its transaction.
   */
  @Component
  static class AckingListener {
    final JdbcTemplate jdbc;
    final AtomicInteger calls = new AtomicInteger();
    final Set<String> aborted = ConcurrentHashMap.newKeySet();

    AckingListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      RefusedTopology.createEffects(jdbc);
    }

    public int calls() {
      return calls.get();
    }

    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.refused}", ackMode = "MANUAL")
    public void onMessage(Message message, Channel channel) throws Exception {
      calls.incrementAndGet();
      String body = new String(message.getBody(), StandardCharsets.UTF_8);
      jdbc.update(
          "INSERT INTO boot_rabbit.effects (listener, key) VALUES ('manual-ack-commit', ?)", body);
      channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
      if (aborted.add(body)) {
        try {
          jdbc.queryForObject("SELECT 1 / 0", Integer.class);
        } catch (DataAccessException swallowed) {
          // the transaction is aborted now, and the inbox refuses its commit
        }
      }
    }
  }

  @Autowired AckingListener listener;
  @Autowired RabbitListenerEndpointRegistry registry;
  @Autowired RabbitTemplate rabbit;
  @Autowired JdbcTemplate jdbc;
  @Autowired CachingConnectionFactory connections;

  @Test
  void a_message_acknowledged_before_a_commit_that_failed_comes_back_and_takes_effect_once()
      throws Exception {
    String key = RabbitMessages.keys(1).get(0);
    RabbitMessages.send(rabbit, QUEUE, key, key);
    Await.until("the first call", Duration.ofSeconds(60), () -> listener.calls() >= 1);
    Thread.sleep(1000);
    assertThat(effects(key)).as("effects of the rolled back call").isZero();

    // A restart: an unacknowledged message goes back to the queue.
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    container.stop();
    // Closing the connection returns every unacknowledged message to its queue (a stopped
    // consumer's channel may stay open in the cache).
    connections.resetConnection();
    Await.until(
        "the rolled back message, back on the queue",
        Duration.ofSeconds(60),
        () -> RabbitMessages.ready(rabbit, QUEUE) == 1);
    container.start();
    Await.until("its effect", Duration.ofSeconds(60), () -> effects(key) == 1);
    container.stop();
    // Closing the connection returns every unacknowledged message to its queue (a stopped
    // consumer's channel may stay open in the cache).
    connections.resetConnection();
    assertThat(RabbitMessages.ready(rabbit, QUEUE)).as("messages left").isZero();
    assertThat(effects(key)).isEqualTo(1);
  }

  private int effects(String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_rabbit.effects WHERE listener = 'manual-ack-commit' AND key = ?",
        Integer.class,
        key);
  }
}
