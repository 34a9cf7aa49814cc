package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.inbox.ClaimOutcome;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;

/**
 * A consumer-batch {@code @RabbitListener} in MANUAL ack mode acknowledges the messages it is
 * given; the duplicates the inbox leaves out of its list are acknowledged by the inbox, so that
 * none is delivered again when the container restarts.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RabbitBatchManualAckTest.Topology.class,
      RabbitBatchManualAckTest.BatchListener.class
    },
    properties = "inbox.schema=boot_rabbit_batch")
class RabbitBatchManualAckTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-batch-manual");
  private static final String CONTAINER = "boot-batch-manual";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.batch-manual", () -> QUEUE);
  }

  @Configuration(proxyBeanMethods = false)
  static class Topology {
    /** Not auto-deleted, so that it keeps its messages while the container is stopped. */
    @Bean
    Queue batchManual() {
      return QueueBuilder.nonDurable(QUEUE).expires(600_000).build();
    }

    @Bean
    SimpleRabbitListenerContainerFactory batchManualFactory(ConnectionFactory connections) {
      SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
      factory.setConnectionFactory(connections);
      factory.setBatchListener(true);
      factory.setConsumerBatchEnabled(true);
      factory.setBatchSize(10);
      factory.setReceiveTimeout(200L);
      factory.setAcknowledgeMode(AcknowledgeMode.MANUAL);
      return factory;
    }

    @Bean
    ClaimCounter claimCounter() {
      return new ClaimCounter();
    }
  }

  /** Acknowledges each message it is given, one by one, and records one effect per message. */
  @Component
  static class BatchListener {
    final JdbcTemplate jdbc;
    final AtomicInteger messages = new AtomicInteger();

    BatchListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_rabbit");
      jdbc.execute("CREATE TABLE IF NOT EXISTS boot_rabbit.effects (listener text, key text)");
    }

    /** Read through this method: the bean is a transactional proxy, whose own fields are unset. */
    public int messages() {
      return messages.get();
    }

    @Transactional
    @RabbitListener(
        id = CONTAINER,
        queues = "${test.queue.batch-manual}",
        containerFactory = "batchManualFactory")
    public void onBatch(List<Message> batch, Channel channel) throws IOException {
      for (Message message : batch) {
        messages.incrementAndGet();
        jdbc.update(
            "INSERT INTO boot_rabbit.effects (listener, key) VALUES ('batch-manual', ?)",
            new String(message.getBody(), StandardCharsets.UTF_8));
      }
      for (Message message : batch) {
        channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
      }
    }
  }

  @Autowired RabbitTemplate rabbit;
  @Autowired ClaimCounter claims;
  @Autowired JdbcTemplate jdbc;
  @Autowired BatchListener listener;
  @Autowired RabbitListenerEndpointRegistry registry;

  @Test
  void duplicates_left_out_of_a_batch_are_acknowledged_and_not_redelivered_after_a_restart()
      throws Exception {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      keys.add(UUID.randomUUID().toString());
    }
    // The first three, then all four again and the fourth's own duplicate: batches that mix new
    // messages and duplicates, and duplicates alone.
    for (String key : keys.subList(0, 3)) {
      send(key);
    }
    awaitClaims(3);
    for (String key : keys) {
      send(key);
    }
    awaitClaims(7);
    send(keys.get(3));
    awaitClaims(8);

    assertThat(listener.messages()).isEqualTo(4);
    for (String key : keys) {
      assertThat(effects(key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(claims.count(QUEUE, ClaimOutcome.NEW)).isEqualTo(4);
    assertThat(claims.count(QUEUE, ClaimOutcome.DUPLICATE)).isEqualTo(4);

    // Stopping the consumer returns any unacknowledged message to the queue, ahead of the last one
    // sent below, so the restarted consumer would claim it again before the last one's effect.
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    container.stop();
    assertThat(readyMessages())
        .as("messages left on %s after the consumer stopped", QUEUE)
        .isZero();

    // After the restart, a last message is handled; nothing else is delivered again.
    container.start();
    String last = UUID.randomUUID().toString();
    send(last);
    awaitClaims(9);
    Await.until("the last message's effect", Duration.ofSeconds(60), () -> effects(last) == 1);
    assertThat(listener.messages()).isEqualTo(5);
    assertThat(claims.count(QUEUE, ClaimOutcome.NEW)).isEqualTo(5);
    assertThat(claims.count(QUEUE, ClaimOutcome.DUPLICATE)).isEqualTo(4);
    Await.until("the queue is drained", Duration.ofSeconds(30), () -> readyMessages() == 0);
  }

  private int readyMessages() {
    return rabbit.execute(channel -> channel.queueDeclarePassive(QUEUE)).getMessageCount();
  }

  private void send(String key) {
    rabbit.send(
        "",
        QUEUE,
        MessageBuilder.withBody(key.getBytes(StandardCharsets.UTF_8))
            .setContentType("text/plain")
            .setMessageId(key)
            .build());
  }

  private void awaitClaims(int count) throws Exception {
    Await.until(
        count + " claims on " + QUEUE, Duration.ofSeconds(90), () -> claims.total(QUEUE) >= count);
  }

  private int effects(String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_rabbit.effects WHERE listener = 'batch-manual' AND key = ?",
        Integer.class,
        key);
  }
}
