package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
 * were republished, so that neither is left unacknowledged, delivered again after a restart and
 * dead-lettered a second time.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RabbitManualAckDeadLetterTest.Topology.class,
      RabbitManualAckDeadLetterTest.ManualListener.class
    },
    properties = {
      "inbox.schema=boot_rabbit_manual_dead",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms"
    })
class RabbitManualAckDeadLetterTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-manual-refused");
  private static final String DEAD_LETTERS = TestRabbit.newQueueName("boot-manual-refused-dead");
  private static final String CONTAINER = "boot-manual-refused";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.manual-refused", () -> QUEUE);
  }

  @Configuration(proxyBeanMethods = false)
  static class Topology {
    /** Not auto-deleted, so that it keeps its messages while the container is stopped. */
    @Bean
    Queue manualRefused() {
      return QueueBuilder.nonDurable(QUEUE).expires(600_000).build();
    }

    @Bean
    Queue manualRefusedDeadLetters() {
      return QueueBuilder.nonDurable(DEAD_LETTERS).expires(600_000).build();
    }

    @Bean
    MessageRecoverer republishToDeadLetters(RabbitTemplate template, Inbox inbox) {
      return new InboxRepublishMessageRecoverer(template, "", DEAD_LETTERS, inbox);
    }

    @Bean
    ClaimCounter claimCounter() {
      return new ClaimCounter();
    }
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
      jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_rabbit");
      jdbc.execute("CREATE TABLE IF NOT EXISTS boot_rabbit.effects (listener text, key text)");
    }

    /** Read through this method: the bean is a transactional proxy, whose own fields are unset. */
    public int calls() {
      return calls.get();
    }

    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.manual-refused}", ackMode = "MANUAL")
    public void onMessage(
        String payload, Channel channel, @Header(AmqpHeaders.DELIVERY_TAG) long deliveryTag)
        throws IOException {
      calls.incrementAndGet();
      jdbc.update(
          "INSERT INTO boot_rabbit.effects (listener, key) VALUES ('manual-refused', ?)", payload);
      if (payload.startsWith("refuse")) {
        throw new NonRetryableException("payment " + payload + " is refused by policy");
      }
      channel.basicAck(deliveryTag, false);
    }
  }

  @Autowired RabbitTemplate rabbit;
  @Autowired ClaimCounter claims;
  @Autowired JdbcTemplate jdbc;
  @Autowired ManualListener listener;
  @Autowired RabbitListenerEndpointRegistry registry;

  @Test
  void refused_messages_are_dead_lettered_once_and_acknowledged_so_a_restart_never_repeats_them()
      throws Exception {
    List<String> keys = RabbitMessages.keys(3);
    for (String key : keys) {
      send(key, key);
    }
    awaitClaims(3);
    // The three again (duplicates), the first with another body (a mismatch), a new key, and one
    // the listener refuses.
    for (String key : keys) {
      send(key, key);
    }
    String mismatched = keys.get(0);
    send(mismatched, "other-" + mismatched);
    String fourth = UUID.randomUUID().toString();
    send(fourth, fourth);
    String refused = UUID.randomUUID().toString();
    send(refused, "refuse-" + refused);
    awaitClaims(9);

    Message mismatch = RabbitMessages.awaitDeadLetter(rabbit, DEAD_LETTERS, mismatched);
    assertThat(new String(mismatch.getBody(), StandardCharsets.UTF_8))
        .isEqualTo("other-" + mismatched);
    assertThat(mismatch.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "mismatch")
        .containsEntry("x-inbox-key", mismatched)
        .containsEntry("x-inbox-scope", QUEUE);
    Message nonRetryable = RabbitMessages.awaitDeadLetter(rabbit, DEAD_LETTERS, refused);
    assertThat(nonRetryable.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "non_retryable")
        .containsEntry("x-inbox-key", refused)
        .containsEntry("x-inbox-scope", QUEUE);

    for (String key : List.of(keys.get(0), keys.get(1), keys.get(2), fourth)) {
      assertThat(effects(key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(effects("other-" + mismatched)).isZero();
    assertThat(effects("refuse-" + refused)).as("rolled back").isZero();
    assertThat(listener.calls()).as("calls: four new keys and the refused one").isEqualTo(5);
    assertThat(claims.count(QUEUE, ClaimOutcome.NEW)).isEqualTo(5);
    assertThat(claims.count(QUEUE, ClaimOutcome.DUPLICATE)).isEqualTo(3);
    assertThat(claims.count(QUEUE, ClaimOutcome.MISMATCH)).isEqualTo(1);

    // Stopping the consumer returns any unacknowledged message to the queue, ahead of the last one
    // sent below, so the restarted consumer would claim it (and dead-letter it) before the last.
    // Its channel may be closed only after the count below (the cached channel of an unacknowledged
    // refused message was, in the run that proved the defect), so the proof is the restart's.
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    container.stop();
    assertThat(RabbitMessages.ready(rabbit, QUEUE))
        .as("messages left unacknowledged on %s, back on it after the consumer stopped", QUEUE)
        .isZero();

    container.start();
    String last = UUID.randomUUID().toString();
    send(last, last);
    Await.until("the last message's effect", Duration.ofSeconds(60), () -> effects(last) == 1);
    assertThat(claims.count(QUEUE, ClaimOutcome.MISMATCH)).as("mismatches claimed").isEqualTo(1);
    assertThat(claims.count(QUEUE, ClaimOutcome.NEW)).as("the refused one again?").isEqualTo(6);
    assertThat(listener.calls()).isEqualTo(6);
    assertThat(RabbitMessages.ready(rabbit, DEAD_LETTERS)).as("a second dead letter").isZero();
  }

  private void send(String key, String body) {
    RabbitMessages.send(rabbit, QUEUE, key, body);
  }

  private void awaitClaims(int count) throws Exception {
    Await.until(
        count + " claims on " + QUEUE, Duration.ofSeconds(90), () -> claims.total(QUEUE) >= count);
  }

  private int effects(String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_rabbit.effects WHERE listener = 'manual-refused' AND key = ?",
        Integer.class,
        key);
  }
}
