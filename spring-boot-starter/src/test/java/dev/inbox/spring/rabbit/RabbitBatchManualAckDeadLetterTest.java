package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.inbox.ClaimOutcome;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.TestRabbit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;

/**
 * A consumer-batch {@code @RabbitListener} in MANUAL ack mode, configured by Boot's properties with
 * its listener retry and an {@link InboxRepublishMessageRecoverer}: a mismatch in one batch with
 * new messages and duplicates is dead-lettered once, alone, and acknowledged after it was
 * republished, so that a restart never delivers it again.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RefusedTopology.class,
      RabbitBatchManualAckDeadLetterTest.BatchListener.class
    },
    properties = {
      "inbox.schema=boot_rabbit_batch_dead",
      "spring.rabbitmq.listener.simple.acknowledge-mode=manual",
      "spring.rabbitmq.listener.simple.consumer-batch-enabled=true",
      "spring.rabbitmq.listener.simple.batch-size=10",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms"
    })
class RabbitBatchManualAckDeadLetterTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-batch-refused");
  private static final String DEAD_LETTERS = TestRabbit.newQueueName("boot-batch-refused-dead");
  private static final String CONTAINER = "boot-batch-refused";
  private static final String LISTENER = "batch-refused";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.refused", () -> QUEUE);
    registry.add("test.queue.refused-dead", () -> DEAD_LETTERS);
  }

  /** Acknowledges each message it is given, one by one, after one effect per message. */
  @Component
  static class BatchListener {
    final JdbcTemplate jdbc;
    final AtomicInteger messages = new AtomicInteger();

    BatchListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      RefusedTopology.createEffects(jdbc);
    }

    /** Read through this method: the bean is a transactional proxy, whose own fields are unset. */
    public int messages() {
      return messages.get();
    }

    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.refused}")
    public void onBatch(List<Message> batch, Channel channel) throws IOException {
      for (Message message : batch) {
        messages.incrementAndGet();
        jdbc.update(
            "INSERT INTO boot_rabbit.effects (listener, key) VALUES (?, ?)",
            LISTENER,
            new String(message.getBody(), StandardCharsets.UTF_8));
      }
      for (Message message : batch) {
        channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
      }
    }
  }

  @Autowired BatchListener listener;
  @Autowired RabbitListenerEndpointRegistry registry;
  RefusedQueue queue;

  @Autowired
  void queue(RabbitTemplate rabbit, JdbcTemplate jdbc, ClaimCounter claims) {
    queue = new RefusedQueue(rabbit, jdbc, claims, QUEUE, DEAD_LETTERS, LISTENER);
  }

  @Test
  void a_mismatch_in_a_batch_is_dead_lettered_once_alone_and_never_delivered_again()
      throws Exception {
    List<String> keys = RabbitMessages.keys(5);
    for (String key : keys.subList(0, 3)) {
      queue.send(key, key);
    }
    queue.awaitClaims(3);

    // Queued while the consumer is stopped, so that it takes them as one batch: the three again
    // (duplicates), the first with another body (a mismatch) and two new keys.
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    container.stop();
    for (String key : keys.subList(0, 3)) {
      queue.send(key, key);
    }
    String mismatched = keys.get(0);
    queue.send(mismatched, "other-" + mismatched);
    for (String key : keys.subList(3, 5)) {
      queue.send(key, key);
    }
    container.start();
    queue.awaitClaims(9);

    Map<String, Message> dead = queue.awaitDeadLetters(1);
    assertThat(dead).containsOnlyKeys(mismatched);
    Message mismatch = dead.get(mismatched);
    assertThat(new String(mismatch.getBody(), StandardCharsets.UTF_8))
        .isEqualTo("other-" + mismatched);
    assertThat(mismatch.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "mismatch")
        .containsEntry("x-inbox-key", mismatched)
        .containsEntry("x-inbox-attempts", 1)
        .containsEntry("x-inbox-scope", QUEUE);
    for (String key : keys) {
      assertThat(queue.effects(key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(queue.effects("other-" + mismatched)).isZero();
    assertThat(listener.messages()).isEqualTo(5);
    assertThat(queue.claims(ClaimOutcome.NEW)).isEqualTo(5);
    assertThat(queue.claims(ClaimOutcome.DUPLICATE)).isEqualTo(3);
    assertThat(queue.claims(ClaimOutcome.MISMATCH)).isEqualTo(1);

    queue.restartAndAssertNothingRefusedAgain(container);
    assertThat(queue.claims(ClaimOutcome.DUPLICATE)).isEqualTo(3);
    assertThat(listener.messages()).isEqualTo(6);
  }
}
