package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.DeadLetterReason;
import dev.inbox.rabbit.spi.RabbitConsumerListener;
import dev.inbox.spi.MessageOutcome;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** An {@link Error} in a handler, and anything the worker cannot handle, on the real broker. */
class WorkerFailureTest extends RabbitTestSupport {

  @Test
  void aStackOverflowInTheHandlerIsAFailedAttemptAndTheDeliveryIsDeadLetteredAfterMaxAttempts()
      throws Exception {
    InboxRabbitConsumer consumer =
        started(
            consumerWithoutHandler(inbox(settings().maxAttempts(3).build()), connection)
                .handler(
                    (delivery, tx) -> {
                      if (delivery.getProperties().getMessageId().equals("overflow-1")) {
                        recurse(0);
                      }
                      effects.apply(tx, delivery.getProperties().getMessageId(), amount(delivery));
                    }));
    try (Channel channel = connection.createChannel()) {
      for (int i = 0; i < 20; i++) {
        publish(channel, "ok-" + i, "1");
        if (i == 5) {
          publish(channel, "overflow-1", "7");
        }
      }
    }

    await(
        "20 effects and 1 dead letter",
        Duration.ofSeconds(90),
        () -> effects.count() == 20 && readyMessages(queue.deadLetterQueue()) == 1);
    GetResponse dead = takeDeadLetters(1).get("7");
    assertThat(reason(dead)).isEqualTo("gave_up");
    assertThat(dead.getProps().getHeaders().get(DeadLetterHeaders.ATTEMPTS)).isEqualTo(3);
    assertThat(header(dead, DeadLetterHeaders.EXCEPTION_CLASS))
        .isEqualTo(StackOverflowError.class.getName());
    assertThat(consumer.isRunning()).isTrue();
    assertThat(consumer.failure()).isEmpty();
    assertExactlyOnceAndDrained(20, 20);
  }

  /**
   * The listener is called while a batch is decided and settled: an exception there must neither
   * requeue the batch (which would bring it back, forever) nor stop the worker.
   */
  @Test
  void aListenerThatThrowsOnEveryCallStopsNothingAndEachDeliveryTakesEffectOnce() throws Exception {
    Set<String> called = ConcurrentHashMap.newKeySet();
    RabbitConsumerListener broken =
        new RabbitConsumerListener() {
          @Override
          public void deliveries(String queue, MessageOutcome outcome, int count) {
            called.add(outcome.name());
            throw new IllegalArgumentException("a registry refused the meter");
          }

          @Override
          public void batch(String queue, Duration latency) {
            called.add("batch");
            throw new IllegalArgumentException("a registry refused the meter");
          }
        };
    InboxRabbitConsumer consumer =
        started(consumer(inbox(settings().build()), connection).listener(broken));
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "1");
      publish(channel, "pay-2", "2");
      publish(channel, "pay-1", "1");
      channel.basicPublish("", queue.queue(), null, "7".getBytes(StandardCharsets.UTF_8));
    }

    await(
        "2 effects, 1 dead letter and every outcome reported",
        Duration.ofSeconds(60),
        () ->
            effects.count() == 2
                && readyMessages(queue.deadLetterQueue()) == 1
                && called.containsAll(Set.of("NEW", "DUPLICATE", "DEAD_LETTERED", "batch")));
    assertThat(reason(takeDeadLetters(1).get("7"))).isEqualTo(DeadLetterReason.INVALID_KEY.code());
    assertThat(consumer.isRunning()).isTrue();
    assertThat(consumer.failure()).isEmpty();
    assertExactlyOnceAndDrained(2, 3);
  }

  @Test
  void anErrorTheWorkerCannotHandleCancelsTheConsumerSoThatAnotherOneGetsTheDelivery()
      throws Exception {
    AtomicBoolean broken = new AtomicBoolean(true);
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    InboxRabbitConsumer first =
        started(
            consumer(inbox(settings().build()), connection)
                .keyExtractor(
                    delivery -> {
                      if (broken.getAndSet(false)) {
                        throw new LinkageError("the key extractor's class failed to load");
                      }
                      return delivery.getProperties().getMessageId();
                    })
                .onFailure(reported::add));
    try (Channel channel = connection.createChannel()) {
      publish(channel, "pay-1", "100");
    }

    await("the failure to be reported", Duration.ofSeconds(60), () -> reported.size() == 1);
    assertThat(first.isRunning()).isFalse();
    assertThat(first.failure()).get().isInstanceOf(LinkageError.class);
    assertThat(reported.get(0)).isSameAs(first.failure().get());
    await(
        "the broker to drop the failed consumer",
        Duration.ofSeconds(30),
        () -> consumerCount() == 0 && readyMessages(queue.queue()) == 1);

    started(consumer(inbox(settings().build()), connection));
    assertExactlyOnceAndDrained(1, 100);
    assertThat(reported).hasSize(1);
  }

  @Test
  void aDeliveryWithoutKeyWhoseHandlerSwallowedAnSqlErrorIsRequeuedNotAcknowledged()
      throws Exception {
    AtomicBoolean swallow = new AtomicBoolean(true);
    started(
        consumerWithoutHandler(inbox(settings().build()), connection)
            .processDeliveriesWithoutKeyWithoutDeduplication(dataSource)
            .handler(
                (delivery, tx) -> {
                  effects.apply(tx, "no-key", amount(delivery));
                  if (swallow.getAndSet(false)) {
                    // The idiom that aborts the transaction: catch, and carry on without a
                    // savepoint. Its commit then rolls back without a word.
                    try (Statement statement = tx.createStatement()) {
                      statement.execute("SELECT 1 / 0");
                    } catch (SQLException e) {
                      assertThat(e.getSQLState()).isEqualTo("22012");
                    }
                  }
                }));
    try (Channel channel = connection.createChannel()) {
      channel.basicPublish("", queue.queue(), null, "100".getBytes(StandardCharsets.UTF_8));
    }

    assertExactlyOnceAndDrained(1, 100);
    assertThat(swallow).isFalse();
  }

  private long consumerCount() throws Exception {
    try (Channel channel = connection.createChannel()) {
      return channel.queueDeclarePassive(queue.queue()).getConsumerCount();
    }
  }

  private static int recurse(int depth) {
    return recurse(depth + 1) + 1;
  }
}
