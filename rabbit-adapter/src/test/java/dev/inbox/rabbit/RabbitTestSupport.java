package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import dev.inbox.testing.Await;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestRabbit;
import dev.inbox.testing.TestStorage;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/** The real RabbitMQ, a fresh schema with an effects table and fresh queues per test. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RabbitTestSupport {
  protected TestRabbit rabbit;
  protected HikariDataSource dataSource;
  protected Connection connection;
  protected String schema;
  protected EffectsTable effects;
  protected RabbitTopology.Names queue;
  protected final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  void start() throws Exception {
    rabbit = TestRabbit.shared();
    dataSource = TestDataSources.pool(20);
    connection = rabbit.connectionFactory().newConnection("inbox-rabbit-tests");
  }

  @AfterAll
  void stop() throws Exception {
    connection.close();
    dataSource.close();
  }

  @BeforeEach
  void fresh() throws Exception {
    schema = TestDataSources.newSchema("rabbit");
    effects = new EffectsTable(dataSource, schema);
    effects.create();
    try (Channel channel = connection.createChannel()) {
      queue = RabbitTopology.declareWithDeadLetter(channel, TestRabbit.newQueueName("payments"));
    }
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    closeables.clear();
    deleteTopology(connection, queue);
  }

  /** Deletes the queue, its dead-letter queue and its dead-letter exchange. */
  static void deleteTopology(Connection connection, RabbitTopology.Names queue)
      throws IOException, TimeoutException {
    try (Channel channel = connection.createChannel()) {
      channel.queueDelete(queue.queue());
      channel.queueDelete(queue.deadLetterQueue());
      channel.exchangeDelete(queue.deadLetterExchange());
    }
  }

  protected Inbox inbox(InboxSettings settings) {
    Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build();
    closeables.add(inbox);
    return inbox;
  }

  protected InboxSettings.Builder settings() {
    return settings(schema);
  }

  /** An inbox's settings in the schema, with no janitor. */
  static InboxSettings.Builder settings(String schema) {
    return InboxSettings.builder()
        .schema(schema)
        .storage(Storage.valueOf(TestStorage.name()))
        .janitorInterval(Duration.ZERO);
  }

  /** A consumer builder whose handler writes one effect per new delivery. */
  protected InboxRabbitConsumer.Builder consumer(Inbox inbox, Connection on) {
    return consumerWithoutHandler(inbox, on)
        .handler(
            (delivery, tx) ->
                effects.apply(tx, delivery.getProperties().getMessageId(), amount(delivery)));
  }

  /** A consumer builder of the test's queue, dead-lettering to its exchange; set a handler. */
  protected InboxRabbitConsumer.Builder consumerWithoutHandler(Inbox inbox, Connection on) {
    return InboxRabbitConsumer.builder()
        .connection(on)
        .queue(queue.queue())
        .inbox(inbox)
        .deadLetterExchange(queue.deadLetterExchange());
  }

  /** The amount a payment's body carries. */
  protected static long amount(Delivery delivery) {
    return Long.parseLong(new String(delivery.getBody(), StandardCharsets.UTF_8));
  }

  protected InboxRabbitConsumer started(InboxRabbitConsumer.Builder builder) throws Exception {
    InboxRabbitConsumer consumer = builder.build().start();
    closeables.add(consumer);
    return consumer;
  }

  /** Publishes with confirms, each payment's key as its messageId. */
  protected void publish(PaymentStream stream) throws Exception {
    publish(stream.messages());
  }

  /** Publishes with confirms, each payment's key as its messageId. */
  protected void publish(List<PaymentStream.Message> messages) throws Exception {
    try (Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      for (PaymentStream.Message message : messages) {
        publish(channel, message.key(), Long.toString(message.amount()));
      }
      channel.waitForConfirmsOrDie(30_000);
    }
  }

  protected void publish(Channel channel, String messageId, String body) throws Exception {
    AMQP.BasicProperties properties =
        new AMQP.BasicProperties.Builder().messageId(messageId).deliveryMode(2).build();
    channel.basicPublish("", queue.queue(), properties, body.getBytes(StandardCharsets.UTF_8));
  }

  /** Takes this many messages off the dead-letter queue, by body. */
  protected Map<String, GetResponse> takeDeadLetters(int count) throws Exception {
    Map<String, GetResponse> deadByBody = new HashMap<>();
    try (Channel channel = connection.createChannel()) {
      for (int i = 0; i < count; i++) {
        GetResponse dead = channel.basicGet(queue.deadLetterQueue(), true);
        deadByBody.put(new String(dead.getBody(), StandardCharsets.UTF_8), dead);
      }
    }
    return deadByBody;
  }

  protected static String reason(GetResponse deadLetter) {
    return header(deadLetter, DeadLetterHeaders.REASON);
  }

  protected static String detail(GetResponse deadLetter) {
    return header(deadLetter, DeadLetterHeaders.DETAIL);
  }

  /** A header of a dead letter as a string, or null when it has none of that name. */
  protected static String header(GetResponse deadLetter, String name) {
    Object value = deadLetter.getProps().getHeaders().get(name);
    return value == null ? null : value.toString();
  }

  /** The {@code inbox.rabbit.deliveries} counted with this outcome. */
  protected static double count(MeterRegistry registry, String outcome) {
    var counter = registry.find("inbox.rabbit.deliveries").tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  protected long readyMessages(String name) throws Exception {
    try (Channel channel = connection.createChannel()) {
      return channel.queueDeclarePassive(name).getMessageCount();
    }
  }

  protected static void await(String what, Duration timeout, Callable<Boolean> condition)
      throws Exception {
    Await.until(what, timeout, condition);
  }

  /**
   * Waits for the effects, closes the consumers so that anything unacknowledged goes back to the
   * queue, and checks that nothing did: every delivery was acknowledged after its commit.
   */
  protected void assertExactlyOnceAndDrained(PaymentStream stream) throws Exception {
    assertExactlyOnceAndDrained(stream.distinct(), stream.expectedSum());
  }

  /** Like {@link #assertExactlyOnceAndDrained(PaymentStream)}, for any messages. */
  protected void assertExactlyOnceAndDrained(long distinct, long expectedSum) throws Exception {
    await(
        distinct + " effects",
        Duration.ofSeconds(90),
        () -> effects.count() >= distinct && readyMessages(queue.queue()) == 0);
    for (int i = closeables.size() - 1; i >= 0; i--) {
      if (closeables.get(i) instanceof InboxRabbitConsumer consumer) {
        consumer.close();
      }
    }
    assertThat(readyMessages(queue.queue())).as("unacknowledged deliveries").isZero();
    assertThat(effects.count()).as("effects").isEqualTo(distinct);
    assertThat(effects.distinctKeys()).as("distinct keys").isEqualTo(distinct);
    assertThat(effects.sum()).as("sum of amounts").isEqualTo(expectedSum);
  }
}
