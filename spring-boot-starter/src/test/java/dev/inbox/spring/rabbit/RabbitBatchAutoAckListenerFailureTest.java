package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
 * A consumer-batch {@code @RabbitListener} in AUTO ack mode whose listener fails on a batch that
 * holds duplicates and a mismatch: after the listener retry, its {@link
 * InboxRepublishMessageRecoverer} dead-letters every message of the batch but the duplicates, each
 * once (the mismatch with its refusal), and the container acknowledges the batch. A duplicate,
 * settled when it was first handled, is neither dead-lettered nor handled again, and the new
 * messages' writes rolled back with the failure.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RefusedTopology.class,
      RabbitBatchAutoAckListenerFailureTest.FailingBatchListener.class
    },
    properties = {
      "inbox.schema=boot_rabbit_batch_auto_failure",
      "spring.rabbitmq.listener.simple.acknowledge-mode=auto",
      "spring.rabbitmq.listener.simple.consumer-batch-enabled=true",
      "spring.rabbitmq.listener.simple.batch-size=10",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms"
    })
class RabbitBatchAutoAckListenerFailureTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-batch-auto-failure");
  private static final String DEAD_LETTERS =
      TestRabbit.newQueueName("boot-batch-auto-failure-dead");
  private static final String CONTAINER = "boot-batch-auto-failure";
  private static final String LISTENER = "batch-auto-failure";
  private static final String POISON = "poison-";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.refused", () -> QUEUE);
    registry.add("test.queue.refused-dead", () -> DEAD_LETTERS);
  }

  /**
   * Writes one effect per message it is given, then fails the whole batch when one of its bodies is
   * poison: a failure of the listener, not a refusal by the inbox.
   */
  @Component
  static class FailingBatchListener {
    final JdbcTemplate jdbc;
    final AtomicInteger calls = new AtomicInteger();

    FailingBatchListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      RefusedTopology.createEffects(jdbc);
    }

    /** Read through this method: the bean is a transactional proxy, whose own fields are unset. */
    public int calls() {
      return calls.get();
    }

    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.refused}")
    public void onBatch(List<Message> batch) {
      calls.incrementAndGet();
      boolean poisoned = false;
      for (Message message : batch) {
        String body = new String(message.getBody(), StandardCharsets.UTF_8);
        jdbc.update(
            "INSERT INTO boot_rabbit.effects (listener, key) VALUES (?, ?)", LISTENER, body);
        poisoned |= body.startsWith(POISON);
      }
      if (poisoned) {
        throw new IllegalStateException("the batch holds a poison message");
      }
    }
  }

  @Autowired FailingBatchListener listener;
  @Autowired RabbitListenerEndpointRegistry registry;
  @Autowired RabbitTemplate rabbit;
  RefusedQueue queue;

  @Autowired
  void queue(RabbitTemplate rabbit, JdbcTemplate jdbc, ClaimCounter claims) {
    queue = new RefusedQueue(rabbit, jdbc, claims, QUEUE, DEAD_LETTERS, LISTENER);
  }

  @Test
  void a_failed_batch_dead_letters_its_new_messages_once_and_never_its_duplicates()
      throws Exception {
    List<String> keys = RabbitMessages.keys(4);
    List<String> handled = keys.subList(0, 2);
    for (String key : handled) {
      queue.send(key, key);
    }
    queue.awaitClaims(2);

    // Queued while the consumer is stopped, so that it takes them as one batch: the two handled
    // keys again (duplicates), the first with another body (a mismatch, which the inbox refuses),
    // a poison message and a new one.
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    container.stop();
    for (String key : handled) {
      queue.send(key, key);
    }
    String mismatched = handled.get(0);
    queue.send(mismatched, "other-" + mismatched);
    String poison = keys.get(2);
    String innocent = keys.get(3);
    queue.send(poison, POISON + poison);
    queue.send(innocent, innocent);
    int callsBefore = listener.calls();
    container.start();

    Map<String, Message> dead = queue.awaitDeadLetters(3);
    assertThat(dead).containsOnlyKeys(poison, innocent, mismatched);
    assertThat(dead.get(poison).getMessageProperties().getHeaders())
        .containsEntry("x-exception-message", "the batch holds a poison message");
    // The refused message goes with its own refusal, not the failure of a listener it never
    // reached.
    Message mismatch = dead.get(mismatched);
    assertThat(new String(mismatch.getBody(), StandardCharsets.UTF_8))
        .isEqualTo("other-" + mismatched);
    assertThat(mismatch.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "mismatch")
        .containsEntry("x-inbox-key", mismatched);
    assertThat(queue.effects("other-" + mismatched)).isZero();
    for (String key : handled) {
      assertThat(queue.effects(key)).as("effects of the handled %s", key).isEqualTo(1);
    }
    assertThat(queue.effects(POISON + poison)).as("effects of the poison, rolled back").isZero();
    assertThat(queue.effects(innocent)).as("effects of the new one, rolled back").isZero();
    assertThat(listener.calls() - callsBefore)
        .as("the poison's batch handed to the listener, then twice again by the retry")
        .isGreaterThanOrEqualTo(3);
    assertThat(queue.claims(ClaimOutcome.DUPLICATE)).as("duplicates claimed").isPositive();

    // The container acknowledged the whole batch once its dead letters were sent, duplicates
    // included: a restart brings nothing back, and the next message is handled alone.
    container.stop();
    assertThat(RabbitMessages.ready(rabbit, QUEUE)).as("messages back on the queue").isZero();
    container.start();
    String last = RabbitMessages.keys(1).get(0);
    queue.send(last, last);
    Await.until(
        "the last message's effect", Duration.ofSeconds(60), () -> queue.effects(last) == 1);
    for (String key : handled) {
      assertThat(queue.effects(key)).as("effects of the handled %s", key).isEqualTo(1);
    }
    assertThat(RabbitMessages.ready(rabbit, DEAD_LETTERS)).as("a third dead letter").isZero();
  }
}
