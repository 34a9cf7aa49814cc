package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The inbox under plain {@code @RabbitListener} methods in Spring AMQP's own containers, against
 * the real RabbitMQ and PostgreSQL, with Boot's listener retry and a {@code
 * RepublishMessageRecoverer}.
 */
@SpringBootTest(
    classes = {TestApplication.class, RabbitListeners.class, RabbitListenerTest.Topology.class},
    properties = {
      "inbox.schema=boot_rabbit",
      "inbox.max-attempts=3",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=10", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=9", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms",
      // One unacknowledged message stops a consumer: a duplicate left unacknowledged would show.
      "spring.rabbitmq.listener.simple.prefetch=1"
    })
class RabbitListenerTest {
  private static final String PAYMENTS = TestRabbit.newQueueName("boot-payments");
  private static final String STORM = TestRabbit.newQueueName("boot-storm");
  private static final String POISON = TestRabbit.newQueueName("boot-poison");
  private static final String MANUAL = TestRabbit.newQueueName("boot-manual");
  private static final String STRICT = TestRabbit.newQueueName("boot-strict");
  private static final String AUTO_CHANNEL = TestRabbit.newQueueName("boot-auto-channel");
  private static final String DEAD_LETTERS = TestRabbit.newQueueName("boot-dead");

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.payments", () -> PAYMENTS);
    registry.add("test.queue.storm", () -> STORM);
    registry.add("test.queue.poison", () -> POISON);
    registry.add("test.queue.manual", () -> MANUAL);
    registry.add("test.queue.strict", () -> STRICT);
    registry.add("test.queue.auto-channel", () -> AUTO_CHANNEL);
  }

  /** The queues, auto-deleted with their consumers, and a dead-letter queue. */
  @Configuration(proxyBeanMethods = false)
  static class Topology {
    @Bean
    Queue payments() {
      return new Queue(PAYMENTS, false, false, true);
    }

    @Bean
    Queue storm() {
      return new Queue(STORM, false, false, true);
    }

    @Bean
    Queue poison() {
      return new Queue(POISON, false, false, true);
    }

    @Bean
    Queue manual() {
      return new Queue(MANUAL, false, false, true);
    }

    @Bean
    Queue strict() {
      return new Queue(STRICT, false, false, true);
    }

    @Bean
    Queue autoChannel() {
      return new Queue(AUTO_CHANNEL, false, false, true);
    }

    @Bean
    ConsumerStarts consumerStarts() {
      return new ConsumerStarts();
    }

    /**
     * Not auto-deleted, since several tests receive from it one after another (an auto-delete queue
     * goes with its last consumer); it expires ten minutes after its last use instead.
     */
    @Bean
    Queue deadLetters() {
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

  @Autowired RabbitTemplate rabbit;
  @Autowired RabbitListeners listeners;
  @Autowired ClaimCounter claims;
  @Autowired JdbcTemplate jdbc;
  @Autowired Inbox inbox;
  @Autowired ConsumerStarts consumerStarts;

  @Test
  void writes_commit_with_the_key_and_redeliveries_are_acknowledged_without_a_call()
      throws Exception {
    List<String> keys = keys(3);
    sendEachTwice(PAYMENTS, keys);
    awaitClaims(PAYMENTS, 6);
    for (String key : keys) {
      assertThat(effects("payments", key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls("payments")).isEqualTo(3);
    assertThat(claims.count(PAYMENTS, ClaimOutcome.DUPLICATE)).isEqualTo(3);
    Await.until(
        "every message of " + PAYMENTS + " is acknowledged",
        Duration.ofSeconds(30),
        () ->
            rabbit.execute(channel -> channel.queueDeclarePassive(PAYMENTS)).getMessageCount()
                == 0);
  }

  @Test
  void thirty_two_messages_with_one_key_on_eight_consumers_take_effect_once() throws Exception {
    String key = UUID.randomUUID().toString();
    for (int i = 0; i < 32; i++) {
      send(STORM, key);
    }
    awaitClaims(STORM, 32);
    assertThat(effects("storm", key)).isEqualTo(1);
    assertThat(listeners.calls("storm")).isEqualTo(1);
  }

  @Test
  void a_failing_message_is_tried_max_attempts_times_then_republished_by_the_recoverer()
      throws Exception {
    String key = UUID.randomUUID().toString();
    int callsBefore = listeners.calls("poison");
    send(POISON, key);
    Message dead = awaitDeadLetter(key);
    assertThat(String.valueOf(dead.getMessageProperties().getHeaders().get("x-exception-message")))
        .contains("gave up after 3 failed attempts");
    assertThat(listeners.calls("poison") - callsBefore).isEqualTo(3);
    assertThat(effects("poison", key)).isZero();
    assertThat(inbox.admin().find(POISON, key).orElseThrow().attempts()).isEqualTo(3);
    Map<String, Object> headers = dead.getMessageProperties().getHeaders();
    assertThat(headers)
        .containsEntry("x-inbox-reason", "gave_up")
        .containsEntry("x-inbox-attempts", 3)
        .containsEntry("x-inbox-key", key)
        .containsEntry("x-inbox-scope", POISON);
    assertThat(String.valueOf(headers.get("x-inbox-detail")))
        .contains("gave up after 3 failed attempts");
  }

  /**
   * A listener that swallows an SQL error and returns normally has an aborted transaction: the
   * inbox refuses its commit, so the message counts as failed (its effect rolled back, its attempt
   * counted) until it gives up, as if it had thrown.
   */
  @Test
  void a_listener_that_swallows_an_sql_error_fails_and_gives_up_like_one_that_throws()
      throws Exception {
    String key = UUID.randomUUID().toString();
    int callsBefore = listeners.calls("poison");
    send(POISON, key, "swallow-" + key);
    Message dead = awaitDeadLetter(key);
    assertThat(dead.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "gave_up")
        .containsEntry("x-inbox-attempts", 3);
    assertThat(listeners.calls("poison") - callsBefore).isEqualTo(3);
    assertThat(effects("poison", "swallow-" + key)).isZero();
    assertThat(inbox.admin().find(POISON, key).orElseThrow().attempts()).isEqualTo(3);
  }

  @Test
  void a_key_reused_with_another_payload_is_republished_as_a_mismatch() throws Exception {
    String key = UUID.randomUUID().toString();
    send(STRICT, key, "first-" + key);
    // The template may publish two messages on two channels, which the broker need not keep in
    // order: the second is sent once the first took effect.
    Await.until(
        "the first message's effect",
        Duration.ofSeconds(60),
        () -> effects("strict", "first-" + key) == 1);
    send(STRICT, key, "second-" + key);
    Message dead = awaitDeadLetter(key);

    assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("second-" + key);
    Map<String, Object> headers = dead.getMessageProperties().getHeaders();
    assertThat(headers)
        .containsEntry("x-inbox-reason", "mismatch")
        // The key's own count: its first message's one successful run.
        .containsEntry("x-inbox-attempts", 1)
        .containsEntry("x-inbox-key", key)
        .containsEntry("x-inbox-scope", STRICT)
        .doesNotContainKey("x-inbox-exception-class");
    assertThat(effects("strict", "first-" + key)).isEqualTo(1);
    assertThat(effects("strict", "second-" + key)).isZero();
  }

  @Test
  void a_listeners_non_retryable_exception_is_republished_with_its_attempt() throws Exception {
    String key = UUID.randomUUID().toString();
    send(STRICT, key, "refuse-" + key);
    Message dead = awaitDeadLetter(key);

    Map<String, Object> headers = dead.getMessageProperties().getHeaders();
    assertThat(headers)
        .containsEntry("x-inbox-reason", "non_retryable")
        .containsEntry("x-inbox-attempts", 1)
        .containsEntry("x-inbox-key", key)
        .containsEntry("x-inbox-scope", STRICT)
        .containsEntry("x-inbox-exception-class", NonRetryableException.class.getName())
        .containsEntry(
            "x-inbox-exception-message", "payment refuse-" + key + " is refused by policy");
    assertThat(effects("strict", "refuse-" + key)).isZero();
    assertThat(inbox.admin().find(STRICT, key).orElseThrow().attempts()).isEqualTo(1);
  }

  /** The dead letter of that key, passing over any other test's. */
  private Message awaitDeadLetter(String key) {
    for (int i = 0; i < 10; i++) {
      Message dead = rabbit.receive(DEAD_LETTERS, 60_000);
      assertThat(dead).as("a dead letter of %s", key).isNotNull();
      if (key.equals(dead.getMessageProperties().getMessageId())) {
        return dead;
      }
    }
    throw new AssertionError("no dead letter of " + key + " among the first ten");
  }

  @Test
  void under_manual_ack_mode_duplicates_are_acknowledged_by_the_inbox_and_never_reach_the_listener()
      throws Exception {
    List<String> keys = keys(3);
    sendEachTwice(MANUAL, keys);
    // With a prefetch of 1, the last message reaches the listener only once every duplicate
    // before it was acknowledged.
    String last = UUID.randomUUID().toString();
    send(MANUAL, last);
    awaitClaims(MANUAL, 7);
    Await.until(
        "the last message's effect", Duration.ofSeconds(60), () -> effects("manual", last) == 1);
    for (String key : keys) {
      assertThat(effects("manual", key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls("manual")).isEqualTo(4);
    assertThat(claims.count(MANUAL, ClaimOutcome.DUPLICATE)).isEqualTo(3);
    assertThat(claims.count(MANUAL, ClaimOutcome.NEW)).isEqualTo(4);
  }

  @Test
  void under_auto_ack_mode_a_listener_taking_the_channel_leaves_duplicates_to_the_container()
      throws Exception {
    List<String> keys = keys(3);
    sendEachTwice(AUTO_CHANNEL, keys);
    // With a prefetch of 1, the last message is delivered after every duplicate before it was
    // acknowledged; had one been acknowledged twice, the broker would have closed the channel
    // ("unknown delivery tag") and the container would have started a new consumer for the rest.
    String last = UUID.randomUUID().toString();
    send(AUTO_CHANNEL, last);
    awaitClaims(AUTO_CHANNEL, 7);
    Await.until(
        "the last message's effect",
        Duration.ofSeconds(60),
        () -> effects("auto-channel", last) == 1);
    for (String key : keys) {
      assertThat(effects("auto-channel", key)).as("effects of %s", key).isEqualTo(1);
    }
    assertThat(listeners.calls("auto-channel")).isEqualTo(4);
    assertThat(claims.count(AUTO_CHANNEL, ClaimOutcome.DUPLICATE)).isEqualTo(3);
    assertThat(claims.count(AUTO_CHANNEL, ClaimOutcome.NEW)).isEqualTo(4);
    Await.until(
        "every message of " + AUTO_CHANNEL + " is acknowledged",
        Duration.ofSeconds(30),
        () ->
            rabbit.execute(channel -> channel.queueDeclarePassive(AUTO_CHANNEL)).getMessageCount()
                == 0);
    assertThat(consumerStarts.of(AUTO_CHANNEL))
        .as("consumers started on %s: one, never restarted after a closed channel", AUTO_CHANNEL)
        .isEqualTo(1);
  }

  private static List<String> keys(int count) {
    return RabbitMessages.keys(count);
  }

  /** Each key twice, the second time as a publisher's re-send. */
  private void sendEachTwice(String queue, List<String> keys) {
    for (int round = 0; round < 2; round++) {
      for (String key : keys) {
        send(queue, key);
      }
    }
  }

  private void send(String queue, String key) {
    send(queue, key, key);
  }

  private void send(String queue, String key, String body) {
    RabbitMessages.send(rabbit, queue, key, body);
  }

  /** Until that many claims (new, duplicate, or any other answer) were made on the queue. */
  private void awaitClaims(String queue, int count) throws Exception {
    Await.until(
        count + " claims on " + queue, Duration.ofSeconds(90), () -> claims.total(queue) >= count);
  }

  private int effects(String listener, String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_rabbit.effects WHERE listener = ? AND key = ?",
        Integer.class,
        listener,
        key);
  }
}
