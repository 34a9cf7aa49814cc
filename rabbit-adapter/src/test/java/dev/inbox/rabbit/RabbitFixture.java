package dev.inbox.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.NonRetryableException;
import dev.inbox.testing.Await;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDatabase;
import dev.inbox.testing.TestRabbit;
import dev.inbox.testing.acceptance.ConsumerAcceptanceSuite;
import dev.inbox.testing.acceptance.ConsumerFixture;
import dev.inbox.testing.acceptance.DeadLetter;
import dev.inbox.testing.acceptance.HandlerKind;
import dev.inbox.testing.acceptance.Payments;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The acceptance suite's fixture on RabbitMQ: a durable queue with its dead-letter exchange and
 * queue ({@link RabbitTopology}), and consumers on a connection of the fixture's own,
 * dead-lettering to that exchange, of deliveries whose body is the amount.
 */
final class RabbitFixture implements ConsumerFixture {
  /** The longest AMQP short string, such as a {@code messageId}, in bytes. */
  private static final int SHORT_STRING_MAX = 255;

  private final TestRabbit rabbit;
  private final String schema;
  private final Connection connection;
  private final RabbitTopology.Names queue;
  private final Inbox inbox;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  RabbitFixture(TestRabbit rabbit, DataSource dataSource, String schema) throws Exception {
    this.rabbit = rabbit;
    this.schema = schema;
    this.connection = rabbit.connectionFactory().newConnection("inbox-acceptance");
    try (Channel channel = connection.createChannel()) {
      this.queue =
          RabbitTopology.declareWithDeadLetter(channel, TestRabbit.newQueueName("acceptance"));
    }
    this.inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(
                RabbitTestSupport.settings(schema)
                    .maxAttempts(ConsumerAcceptanceSuite.MAX_ATTEMPTS)
                    .build())
            .migrate(true)
            .build();
  }

  /** Hands the deliveries to the payments, each on its own or all of a batch at once. */
  static void handleWith(InboxRabbitConsumer.Builder builder, HandlerKind kind, Payments payments) {
    if (kind == HandlerKind.AT_ONCE) {
      builder.newDeliveriesHandler(
          (deliveries, tx) ->
              payments.applyAll(
                  tx,
                  deliveries.stream()
                      .map(
                          d ->
                              new PaymentStream.Message(
                                  d.getProperties().getMessageId(), RabbitTestSupport.amount(d)))
                      .toList()));
    } else {
      builder.handler(
          (delivery, tx) ->
              payments.apply(
                  tx, delivery.getProperties().getMessageId(), RabbitTestSupport.amount(delivery)));
    }
  }

  @Override
  public String source() {
    return queue.queue();
  }

  /**
   * Each key goes in the {@code messageId}, or in the {@code idempotency-key} header when it is
   * longer than a {@code messageId} can be.
   */
  @Override
  public void publish(List<PaymentStream.Message> messages) throws Exception {
    try (Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      for (PaymentStream.Message message : messages) {
        AMQP.BasicProperties.Builder properties =
            new AMQP.BasicProperties.Builder().deliveryMode(2);
        if (message.key().getBytes(StandardCharsets.UTF_8).length <= SHORT_STRING_MAX) {
          properties.messageId(message.key());
        } else {
          properties.headers(Map.of(DeliveryKeyExtractor.DEFAULT_HEADER, message.key()));
        }
        channel.basicPublish(
            "",
            queue.queue(),
            properties.build(),
            Long.toString(message.amount()).getBytes(StandardCharsets.UTF_8));
      }
      channel.waitForConfirmsOrDie(30_000);
    }
  }

  @Override
  public AutoCloseable startConsumer(HandlerKind kind, Payments payments) throws Exception {
    InboxRabbitConsumer.Builder builder =
        InboxRabbitConsumer.builder()
            .connection(connection)
            .queue(queue.queue())
            .inbox(inbox)
            .deadLetterExchange(queue.deadLetterExchange())
            .meterRegistry(registry);
    handleWith(builder, kind, payments);
    return builder.build().start();
  }

  @Override
  public ChildJvm startChild(HandlerKind kind) throws Exception {
    TestDatabase db = TestDatabase.shared();
    return ChildJvm.start(
        RabbitConsumerProcess.class,
        List.of(
            rabbit.uri(),
            queue.queue(),
            queue.deadLetterExchange(),
            db.jdbcUrl(),
            db.user() == null ? "" : db.user(),
            schema,
            kind.name()));
  }

  @Override
  public long unsettled() throws Exception {
    return ready(queue.queue());
  }

  @Override
  public List<DeadLetter> deadLetters(int expected) throws Exception {
    Await.until(
        expected + " dead letters",
        Duration.ofSeconds(30),
        () -> ready(queue.deadLetterQueue()) >= expected);
    List<DeadLetter> letters = new ArrayList<>();
    try (Channel channel = connection.createChannel()) {
      GetResponse letter;
      while ((letter = channel.basicGet(queue.deadLetterQueue(), true)) != null) {
        letters.add(letter(letter));
      }
    }
    return letters;
  }

  private static DeadLetter letter(GetResponse letter) {
    Map<String, Object> headers = letter.getProps().getHeaders();
    String messageId = letter.getProps().getMessageId();
    return new DeadLetter(
        messageId != null ? messageId : text(headers, DeliveryKeyExtractor.DEFAULT_HEADER),
        new String(letter.getBody(), StandardCharsets.UTF_8),
        text(headers, InboxRabbitConsumer.ORIGINAL_QUEUE_HEADER),
        text(headers, DeadLetterHeaders.REASON),
        text(headers, DeadLetterHeaders.DETAIL),
        text(headers, DeadLetterHeaders.KEY),
        ((Number) headers.get(DeadLetterHeaders.ATTEMPTS)).intValue(),
        text(headers, DeadLetterHeaders.EXCEPTION_CLASS),
        text(headers, DeadLetterHeaders.EXCEPTION_MESSAGE));
  }

  private static String text(Map<String, Object> headers, String name) {
    Object value = headers.get(name);
    return value == null ? null : value.toString();
  }

  private long ready(String name) throws Exception {
    try (Channel channel = connection.createChannel()) {
      return channel.queueDeclarePassive(name).getMessageCount();
    }
  }

  @Override
  public int attempts(String key) {
    return inbox.admin().find(queue.queue(), key).map(InboxRecord::attempts).orElse(0);
  }

  @Override
  public long counted(String outcome) {
    return (long) RabbitTestSupport.count(registry, outcome);
  }

  @Override
  public RuntimeException nonRetryable(String message) {
    return new NonRetryableException(message);
  }

  @Override
  public void close() throws Exception {
    inbox.close();
    RabbitTestSupport.deleteTopology(connection, queue);
    connection.close();
  }
}
