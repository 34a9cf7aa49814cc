package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import dev.inbox.testing.PaymentStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The broker closing the consumer's channel (a channel error, as when RabbitMQ's {@code
 * consumer_timeout} closes it with {@code PRECONDITION_FAILED}) ends its deliveries for good: the
 * client recovers connections, never a channel the broker closed. The consumer must say so instead
 * of running on, dead. A closed connection, which the client recovers, must not stop it.
 */
class ChannelClosedByBrokerTest extends RabbitTestSupport {

  @Test
  void theBrokerClosingTheConsumersChannelStopsTheConsumerVisibly() throws Exception {
    assumeThat(rabbit.isLocal()).as("rabbitmqctl reaches only the local broker").isTrue();
    CompletableFuture<Throwable> onFailure = new CompletableFuture<>();
    InboxRabbitConsumer consumer =
        started(consumer(inbox(settings().build()), connection).onFailure(onFailure::complete));
    publish(payments("before", 10));
    await("10 effects", Duration.ofSeconds(30), () -> effects.count() == 10);

    closeChannelOfConsumerOf(queue.queue());

    assertStoppedVisibly(
        consumer,
        onFailure,
        signal -> {
          assertThat(signal.isHardError()).as("a connection error").isFalse();
          assertThat(signal.getMessage()).contains("PRECONDITION_FAILED");
        });
  }

  @Test
  void theBrokerClosingTheConnectionDoesNotStopTheConsumer() throws Exception {
    assumeThat(rabbit.isLocal()).as("rabbitmqctl reaches only the local broker").isTrue();
    CompletableFuture<Throwable> onFailure = new CompletableFuture<>();
    InboxRabbitConsumer consumer =
        consumingThenConnectionClosed(
            rabbit.connectionFactory(), "inbox-consumer-connection-closed", onFailure);

    // Consumed only once the client has recovered the connection and the consumer with it.
    publish(payments("after", 10));
    await("20 effects", Duration.ofSeconds(60), () -> effects.count() == 20);
    assertThat(consumer.isRunning()).isTrue();
    assertThat(consumer.failure()).isEmpty();
    assertThat(onFailure).isNotDone();
    assertExactlyOnceAndDrained(20, 20);
  }

  /**
   * Without automatic recovery nothing reopens a lost connection: the consumer must stop visibly,
   * as for a closed channel, instead of running on with no deliveries.
   */
  @Test
  void theBrokerClosingAConnectionWithoutRecoveryStopsTheConsumerVisibly() throws Exception {
    assumeThat(rabbit.isLocal()).as("rabbitmqctl reaches only the local broker").isTrue();
    ConnectionFactory withoutRecovery = rabbit.connectionFactory();
    withoutRecovery.setAutomaticRecoveryEnabled(false);
    CompletableFuture<Throwable> onFailure = new CompletableFuture<>();
    InboxRabbitConsumer consumer =
        consumingThenConnectionClosed(
            withoutRecovery, "inbox-consumer-connection-unrecovered", onFailure);

    assertStoppedVisibly(
        consumer,
        onFailure,
        signal -> assertThat(signal.isHardError()).as("a connection error").isTrue());
  }

  /**
   * A consumer on a connection of its own (so that the test's own connection is not the one
   * closed), which consumes 10 payments before the broker closes that connection.
   */
  private InboxRabbitConsumer consumingThenConnectionClosed(
      ConnectionFactory factory, String connectionName, CompletableFuture<Throwable> onFailure)
      throws Exception {
    Connection consumerConnection = factory.newConnection(connectionName);
    closeables.add(consumerConnection::abort);
    InboxRabbitConsumer consumer =
        started(
            consumer(inbox(settings().build()), consumerConnection).onFailure(onFailure::complete));
    publish(payments("before", 10));
    await("10 effects", Duration.ofSeconds(30), () -> effects.count() == 10);
    rabbitmqctl("close_connection", connectionPid(connectionName), "closed by the test");
    return consumer;
  }

  /**
   * The consumer stopped where it can be seen: not running, its failure the broker's shutdown
   * signal (checked by {@code signal}), and the same failure handed to onFailure.
   */
  private static void assertStoppedVisibly(
      InboxRabbitConsumer consumer,
      CompletableFuture<Throwable> onFailure,
      java.util.function.Consumer<ShutdownSignalException> signal)
      throws Exception {
    await("the consumer to stop", Duration.ofSeconds(10), () -> !consumer.isRunning());
    assertThat(consumer.failure())
        .get()
        .isInstanceOfSatisfying(ShutdownSignalException.class, signal::accept);
    assertThat(onFailure.get(10, TimeUnit.SECONDS)).isSameAs(consumer.failure().get());
  }

  private static List<PaymentStream.Message> payments(String prefix, int count) {
    return IntStream.range(0, count)
        .mapToObj(i -> new PaymentStream.Message(prefix + "-" + i, 1))
        .toList();
  }

  /**
   * Makes the broker close the channel of the queue's one consumer with a channel error: the
   * channel process is handed an ack of a delivery tag it never sent, which it answers, as it
   * answers a consumer timeout, with {@code channel.close} 406 PRECONDITION_FAILED. (The queue
   * argument {@code x-consumer-timeout} needs RabbitMQ 3.12, and the broker checks timeouts only
   * once a minute.)
   */
  private static void closeChannelOfConsumerOf(String queue) throws Exception {
    String acked =
        rabbitmqctl(
            "eval",
            "[rabbit_channel:do(Ch, {'basic.ack', 1000000000, false})"
                + " || C <- rabbit_amqqueue:consumers_all(<<\"/\">>),"
                + " {queue_name, {resource, _, queue, <<\""
                + queue
                + "\">>}} <- C, {channel_pid, Ch} <- C].");
    assertThat(acked.trim()).as("one consumer's channel told").isEqualTo("[ok]");
  }

  /** The broker's name for the connection with this client-provided name, once it is there. */
  private static String connectionPid(String name) throws Exception {
    String[] found = new String[1];
    await(
        "the connection " + name,
        Duration.ofSeconds(30),
        () -> {
          for (String line :
              rabbitmqctl("-q", "list_connections", "pid", "client_properties").split("\n")) {
            if (line.contains(name)) {
              found[0] = line.substring(0, line.indexOf('\t')).trim();
              return true;
            }
          }
          return false;
        });
    return found[0];
  }

  private static String rabbitmqctl(String... arguments) throws Exception {
    List<String> command = new ArrayList<>(List.of("rabbitmqctl"));
    command.addAll(List.of(arguments));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    return output;
  }
}
