package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.testing.Await;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.jdbc.core.JdbcTemplate;

/** One {@link RefusedTopology} queue as a test drives it: sends, claims, effects, dead letters. */
final class RefusedQueue {
  private final RabbitTemplate rabbit;
  private final JdbcTemplate jdbc;
  private final ClaimCounter claims;
  private final String queue;
  private final String deadLetters;
  private final String listener;

  RefusedQueue(
      RabbitTemplate rabbit,
      JdbcTemplate jdbc,
      ClaimCounter claims,
      String queue,
      String deadLetters,
      String listener) {
    this.rabbit = rabbit;
    this.jdbc = jdbc;
    this.claims = claims;
    this.queue = queue;
    this.deadLetters = deadLetters;
    this.listener = listener;
  }

  void send(String key, String body) {
    RabbitMessages.send(rabbit, queue, key, body);
  }

  /** Until that many claims (new, duplicate, or any other answer) were made on the queue. */
  void awaitClaims(int count) throws Exception {
    Await.until(
        count + " claims on " + queue, Duration.ofSeconds(90), () -> claims.total(queue) >= count);
  }

  int claims(ClaimOutcome outcome) {
    return claims.count(queue, outcome);
  }

  /** The listener's effects of this body. */
  int effects(String body) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_rabbit.effects WHERE listener = ? AND key = ?",
        Integer.class,
        listener,
        body);
  }

  /**
   * The next {@code count} dead letters by key, one per key: in any order, since the template may
   * publish the messages on several channels, which the broker need not keep in order.
   */
  Map<String, Message> awaitDeadLetters(int count) {
    Map<String, Message> byKey = new HashMap<>();
    for (int i = 0; i < count; i++) {
      Message dead = rabbit.receive(deadLetters, 60_000);
      assertThat(dead).as("dead letter %s of %s", i + 1, count).isNotNull();
      assertThat(byKey.put(dead.getMessageProperties().getMessageId(), dead))
          .as("a second dead letter of %s", dead.getMessageProperties().getMessageId())
          .isNull();
    }
    return byKey;
  }

  /**
   * Stops and restarts the container, then sends one more message and waits for its effect: a
   * message left unacknowledged goes back to the queue ahead of it when its channel closes, so the
   * restarted consumer would claim it (a second mismatch) and dead-letter it again before.
   */
  void restartAndAssertNothingRefusedAgain(MessageListenerContainer container) throws Exception {
    container.stop();
    // The channel of an unacknowledged message may be closed only after this count (in the run
    // that proved the defect, it was), so the proof is the restart's.
    assertThat(RabbitMessages.ready(rabbit, queue))
        .as("messages back on %s after the consumer stopped", queue)
        .isZero();
    container.start();
    String last = RabbitMessages.keys(1).get(0);
    send(last, last);
    Await.until("the last message's effect", Duration.ofSeconds(60), () -> effects(last) == 1);
    assertThat(claims(ClaimOutcome.MISMATCH)).as("mismatches claimed").isEqualTo(1);
    assertThat(RabbitMessages.ready(rabbit, deadLetters)).as("a second dead letter").isZero();
  }
}
