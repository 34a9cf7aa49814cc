package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.impl.LongStringHelper;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.DeadLetterReason;
import dev.inbox.Inbox;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestRabbit;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Exactly-once effects and dead letters in what only RabbitMQ does: competing consumers on one
 * queue, the broker closing connections, keys in AMQP properties and headers, quorum queues'
 * delivery count. The scenarios every broker shares are in {@link RabbitAcceptanceTest}.
 */
class RabbitExactlyOnceTest extends RabbitTestSupport {

  @Test
  void twoCompetingConsumersTakeEachEffectOnce() throws Exception {
    PaymentStream stream = new PaymentStream("c", 4_000, 1_000, 2);
    Inbox inbox = inbox(settings().build());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    started(consumer(inbox, connection).prefetch(50).meterRegistry(registry));
    started(consumer(inbox, connection).prefetch(50));
    publish(stream);
    assertExactlyOnceAndDrained(stream);
    assertThat(registry.find("inbox.rabbit.batch.latency").timer().count()).isPositive();
  }

  @Test
  void brokerClosingTheConnectionsMidStreamLosesAndDoublesNothing() throws Exception {
    assumeThat(rabbit.isLocal()).as("rabbitmqctl reaches only the local broker").isTrue();
    PaymentStream stream = new PaymentStream("b", 6_000, 1_500, 3);
    // A connection of its own, so that the test's own connection is not the one closed.
    com.rabbitmq.client.Connection consumerConnection =
        rabbit.connectionFactory().newConnection("inbox-consumer-under-fire");
    closeables.add(consumerConnection::abort);
    started(consumer(inbox(settings().build()), consumerConnection));
    CompletableFuture<Void> publishing =
        CompletableFuture.runAsync(
            () -> {
              try {
                publish(stream);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    for (long threshold : new long[] {1_000, 3_000}) {
      await(threshold + " effects", Duration.ofSeconds(60), () -> effects.count() >= threshold);
      Process close =
          new ProcessBuilder(
                  "rabbitmqctl", "close_connection", connectionName(), "closed by the test")
              .redirectErrorStream(true)
              .start();
      assertThat(close.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(close.exitValue()).as(new String(close.getInputStream().readAllBytes())).isZero();
    }
    publishing.get(60, TimeUnit.SECONDS);
    assertExactlyOnceAndDrained(stream);
  }

  @Test
  void keylessMessagesAndKeyHeadersThatAreNotUtf8ReachTheDeadLetterQueueWithTheReason()
      throws Exception {
    started(consumer(inbox(settings().build()), connection));
    try (Channel channel = connection.createChannel()) {
      for (int i = 0; i < 100; i++) {
        publish(channel, "ok-" + i, "1");
        if (i == 60) {
          channel.basicPublish("", queue.queue(), null, "7".getBytes(StandardCharsets.UTF_8));
        }
        if (i == 70) {
          byte[] invalidUtf8 = {'k', (byte) 0xC3, '('};
          AMQP.BasicProperties badHeader =
              new AMQP.BasicProperties.Builder()
                  .headers(Map.of("idempotency-key", LongStringHelper.asLongString(invalidUtf8)))
                  .build();
          channel.basicPublish("", queue.queue(), badHeader, "8".getBytes(StandardCharsets.UTF_8));
        }
        if (i == 80) {
          // What the client makes of a messageId whose bytes were not UTF-8.
          AMQP.BasicProperties replaced =
              new AMQP.BasicProperties.Builder().messageId("k\uFFFD(").build();
          channel.basicPublish("", queue.queue(), replaced, "9".getBytes(StandardCharsets.UTF_8));
        }
      }
    }
    await(
        "100 effects and 3 dead letters",
        Duration.ofSeconds(60),
        () -> effects.count() == 100 && readyMessages(queue.deadLetterQueue()) == 3);

    Map<String, GetResponse> deadByBody = takeDeadLetters(3);
    for (String body : List.of("7", "8", "9")) {
      assertThat(reason(deadByBody.get(body))).isEqualTo(DeadLetterReason.INVALID_KEY.code());
    }
    assertThat(detail(deadByBody.get("7")))
        .isEqualTo("the delivery has no messageId or idempotency key");
    assertThat(detail(deadByBody.get("8")))
        .contains("the idempotency-key header is not valid UTF-8 (3 bytes)");
    assertThat(detail(deadByBody.get("9"))).contains("the messageId holds U+FFFD");
    assertThat(effects.count()).isEqualTo(100);
  }

  @Test
  void aQuorumQueuesDeliveryCountCountsTowardMaxAttempts() throws Exception {
    String quorum = TestRabbit.newQueueName("quorum");
    try (Channel channel = connection.createChannel()) {
      channel.queueDeclare(quorum, true, false, false, Map.of("x-queue-type", "quorum"));
      channel.confirmSelect();
      AMQP.BasicProperties properties =
          new AMQP.BasicProperties.Builder().messageId("q-1").deliveryMode(2).build();
      channel.basicPublish("", quorum, properties, "5".getBytes(StandardCharsets.UTF_8));
      channel.waitForConfirmsOrDie(10_000);
      // Three deliveries returned unprocessed: the broker counts them, the inbox never saw them.
      for (int i = 0; i < 3; i++) {
        GetResponse[] got = new GetResponse[1];
        await(
            "the quorum queue's message",
            Duration.ofSeconds(10),
            () -> (got[0] = channel.basicGet(quorum, false)) != null);
        channel.basicNack(got[0].getEnvelope().getDeliveryTag(), false, true);
      }
    }
    try {
      Inbox inbox = inbox(settings().maxAttempts(3).build());
      started(
          consumer(inbox, connection)
              .queue(quorum)
              .handler(
                  (delivery, tx) -> {
                    throw new IllegalStateException("cannot apply this payment");
                  }));
      await(
          "the dead letter",
          Duration.ofSeconds(30),
          () -> readyMessages(queue.deadLetterQueue()) == 1);
      // Attempt 4 by the broker's count: dead-lettered after the inbox's first attempt, not third.
      assertThat(inbox.admin().find(quorum, "q-1").orElseThrow().attempts()).isEqualTo(1);
      try (Channel channel = connection.createChannel()) {
        GetResponse dead = channel.basicGet(queue.deadLetterQueue(), true);
        assertThat(dead.getProps().getMessageId()).isEqualTo("q-1");
        assertThat(dead.getProps().getHeaders().get(DeadLetterHeaders.ATTEMPTS)).isEqualTo(4);
      }
    } finally {
      try (Channel channel = connection.createChannel()) {
        channel.queueDelete(quorum);
      }
    }
  }

  @Test
  void deletingTheQueueCancelsTheConsumerAndCallsBack() throws Exception {
    CompletableFuture<String> cancelled = new CompletableFuture<>();
    started(consumer(inbox(settings().build()), connection).onCancel(cancelled::complete));
    try (Channel channel = connection.createChannel()) {
      channel.queueDelete(queue.queue());
    }
    assertThat(cancelled.get(10, TimeUnit.SECONDS)).isEqualTo(queue.queue());
  }

  /** The broker's name for the consumer's connection, once it has (re)connected. */
  private static String connectionName() throws Exception {
    String[] found = new String[1];
    await(
        "the consumer's connection",
        Duration.ofSeconds(30),
        () -> (found[0] = findConnection()) != null);
    return found[0];
  }

  private static String findConnection() throws Exception {
    Process list =
        new ProcessBuilder("rabbitmqctl", "-q", "list_connections", "pid", "client_properties")
            .redirectErrorStream(true)
            .start();
    String output = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    list.waitFor(60, TimeUnit.SECONDS);
    for (String line : output.split("\n")) {
      if (line.contains("inbox-consumer-under-fire")) {
        return line.substring(0, line.indexOf('\t')).trim();
      }
    }
    return null;
  }

  @Test
  void aDeadLetterThatCannotBePublishedIsRequeuedAndTheBatchAfterItIsNotLost() throws Exception {
    Inbox inbox = inbox(settings().maxAttempts(3).build());
    // Published before the consumer starts, so that all 52 arrive in one batch.
    try (Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      channel.basicPublish("", queue.queue(), null, "7".getBytes(StandardCharsets.UTF_8));
      publish(channel, "fails-once", "2");
      for (int i = 0; i < 50; i++) {
        publish(channel, "ok-" + i, "1");
      }
      channel.waitForConfirmsOrDie(30_000);
    }
    AtomicBoolean failed = new AtomicBoolean();
    InboxRabbitConsumer consumer =
        started(
            consumerWithoutHandler(inbox, connection)
                .deadLetterExchange("no-such-exchange-" + UUID.randomUUID())
                .handler(
                    (delivery, tx) -> {
                      String id = delivery.getProperties().getMessageId();
                      if (id.equals("fails-once") && failed.compareAndSet(false, true)) {
                        throw new IllegalStateException("fails on its first delivery only");
                      }
                      effects.apply(tx, id, amount(delivery));
                    }));

    await("51 effects", Duration.ofSeconds(60), () -> effects.count() == 51);
    consumer.close();
    assertThat(failed).as("the handler failed once").isTrue();
    assertThat(effects.distinctKeys()).isEqualTo(51);
    assertThat(readyMessages(queue.queue()))
        .as("the keyless delivery, whose dead letter had nowhere to go, back in the queue")
        .isEqualTo(1);
  }

  @Test
  void startingOnAMissingQueueFailsAndLeavesNoWorkerThreadBehind() throws Exception {
    String missing = TestRabbit.newQueueName("missing");
    InboxRabbitConsumer.Builder builder =
        consumer(inbox(settings().build()), connection)
            .queue(missing)
            .deadLetterExchange(queue.deadLetterExchange());
    assertThatThrownBy(() -> builder.build().start()).isInstanceOf(IOException.class);
    await(
        "the worker thread of the failed start to end",
        Duration.ofSeconds(10),
        () ->
            Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("inbox-rabbit-" + missing)));
  }
}
