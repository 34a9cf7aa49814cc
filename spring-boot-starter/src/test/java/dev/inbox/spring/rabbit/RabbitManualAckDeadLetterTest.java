package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.inbox.ClaimOutcome;
import dev.inbox.NonRetryableException;
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
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;

/**
 * A record {@code @RabbitListener} in MANUAL ack mode, with Boot's listener retry and an {@link
 * InboxRepublishMessageRecoverer}: a message the inbox refuses (a mismatch) and one the listener
 * refuses (its {@link NonRetryableException}) are dead-lettered once and acknowledged after they
 * were republished (and confirmed: publisher confirms are on), so that neither is left
 * unacknowledged, delivered again after a restart and dead-lettered a second time.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RefusedTopology.class,
      RabbitManualAckDeadLetterTest.ManualListener.class
    },
    properties = {
      "inbox.schema=boot_rabbit_manual_dead",
      // The recoverer waits for each dead letter's confirm before acknowledging its original.
      "spring.rabbitmq.publisher-confirm-type=correlated",
      "spring.rabbitmq.publisher-returns=true",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms"
    })
class RabbitManualAckDeadLetterTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-manual-refused");
  private static final String DEAD_LETTERS = TestRabbit.newQueueName("boot-manual-refused-dead");
  private static final String CONTAINER = "boot-manual-refused";
  private static final String LISTENER = "manual-refused";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.refused", () -> QUEUE);
    registry.add("test.queue.refused-dead", () -> DEAD_LETTERS);
  }

  /**
   * Acknowledges each message it handles and records one effect; refuses a body starting with
   * "refuse" by policy, before acknowledging it.
   */
  @Component
  static class ManualListener {
    final JdbcTemplate jdbc;
    final AtomicInteger calls = new AtomicInteger();

    ManualListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      RefusedTopology.createEffects(jdbc);
    }

    /** Read through this method: the bean is a transactional proxy, whose own fields are unset. */
    public int calls() {
      return calls.get();
    }

    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.refused}", ackMode = "MANUAL")
    public void onMessage(
        String payload, Channel channel, @Header(AmqpHeaders.DELIVERY_TAG) long deliveryTag)
        throws IOException {
      calls.incrementAndGet();
      jdbc.update(
          "INSERT INTO boot_rabbit.effects (listener, key) VALUES (?, ?)", LISTENER, payload);
      if (payload.startsWith("refuse")) {
        throw new NonRetryableException("payment " + payload + " is refused by policy");
      }
      channel.basicAck(deliveryTag, false);
    }
  }

  @Autowired ManualListener listener;
  @Autowired RabbitListenerEndpointRegistry registry;
  RefusedQueue queue;

  @Autowired
  void queue(RabbitTemplate rabbit, JdbcTemplate jdbc, ClaimCounter claims) {
    queue = new RefusedQueue(rabbit, jdbc, claims, QUEUE, DEAD_LETTERS, LISTENER);
  }

  @Test
  void refused_messages_are_dead_lettered_once_and_acknowledged_so_a_restart_never_repeats_them()
      throws Exception {
    List<String> keys = RabbitMessages.keys(5);
    for (String key : keys.subList(0, 3)) {
      queue.send(key, key);
    }
    queue.awaitClaims(3);
    // The three again (duplicates), the first with another body (a mismatch), a new key, and one
    // the listener refuses.
    for (String key : keys.subList(0, 3)) {
      queue.send(key, key);
    }
    String mismatched = keys.get(0);
    queue.send(mismatched, "other-" + mismatched);
    String fourth = keys.get(3);
    queue.send(fourth, fourth);
    String refused = keys.get(4);
    queue.send(refused, "refuse-" + refused);
    queue.awaitClaims(9);

    Map<String, Message> dead = queue.awaitDeadLetters(2);
    assertThat(dead).containsOnlyKeys(mismatched, refused);
    Message mismatch = dead.get(mismatched);
    assertThat(new String(mismatch.getBody(), StandardCharsets.UTF_8))
        .isEqualTo("other-" + mismatched);
    assertThat(mismatch.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "mismatch")
        .containsEntry("x-inbox-key", mismatched)
        .containsEntry("x-inbox-scope", QUEUE);
    Message nonRetryable = dead.get(refused);
    assertThat(nonRetryable.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "non_retryable")
        .containsEntry("x-inbox-key", refused)
        .containsEntry("x-inbox-scope", QUEUE);

    for (String key : keys.subList(0, 4)) {
      assertThat(queue.effects(key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(queue.effects("other-" + mismatched)).isZero();
    assertThat(queue.effects("refuse-" + refused)).as("rolled back").isZero();
    assertThat(listener.calls()).as("calls: four new keys and the refused one").isEqualTo(5);
    assertThat(queue.claims(ClaimOutcome.NEW)).isEqualTo(5);
    assertThat(queue.claims(ClaimOutcome.DUPLICATE)).isEqualTo(3);
    assertThat(queue.claims(ClaimOutcome.MISMATCH)).isEqualTo(1);

    queue.restartAndAssertNothingRefusedAgain(registry.getListenerContainer(CONTAINER));
    assertThat(queue.claims(ClaimOutcome.NEW)).as("the refused one claimed again?").isEqualTo(6);
    assertThat(listener.calls()).isEqualTo(6);
  }
}
