package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.kafka.InboxKafkaConsumer;
import dev.inbox.rabbit.InboxRabbitConsumer;
import dev.inbox.rabbit.RabbitTopology;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestKafka;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The example consumers book exactly the money a message names, under the key it was sent with, and
 * dead-letter anything else: a fractional amount, a repeated field, trailing garbage, a body {@code
 * paymentId} that differs from the key, a message without a key.
 */
class ConsumersMoneyTest {
  private static final Duration DEADLINE = Duration.ofSeconds(120);
  private static HikariDataSource dataSource;

  @BeforeAll
  static void migrate() {
    dataSource = TestDataSources.pool(6);
    PaymentsDatabase.migrate(dataSource, InboxSettings.defaults());
  }

  @AfterAll
  static void close() {
    dataSource.close();
  }

  /** The good, the bad and the keyless, in one order for both brokers. */
  private record Send(String key, String body) {}

  private static List<Send> sends(String prefix, String account) {
    String a = "\"account\":\"" + account + "\"";
    return List.of(
        new Send(prefix + "-ok-1", "{" + a + ",\"amountCents\":100}"),
        new Send(prefix + "-frac", "{" + a + ",\"amountCents\":2.75}"),
        new Send(null, "{" + a + ",\"amountCents\":7}"),
        new Send(prefix + "-dup", "{" + a + ",\"amountCents\":1,\"amountCents\":100000}"),
        new Send(prefix + "-id", "{\"paymentId\":\"other\"," + a + ",\"amountCents\":50}"),
        new Send(prefix + "-trail", "{" + a + ",\"amountCents\":5} x"),
        new Send(
            prefix + "-ok-2",
            "{\"paymentId\":\"" + prefix + "-ok-2\"," + a + ",\"amountCents\":30}"));
  }

  private static Inbox inbox() {
    String schema = TestDataSources.newSchema("consmoney");
    // Two attempts, so that a payment that can never be booked reaches the dead letters quickly.
    return Inbox.builder()
        .dataSource(dataSource)
        .settings(
            InboxSettings.builder()
                .schema(schema)
                .maxAttempts(2)
                .janitorInterval(Duration.ZERO)
                .build())
        .migrate(true)
        .build();
  }

  @ParameterizedTest(name = "{0} handler")
  @ValueSource(strings = {"per-item", "at-once"})
  void the_kafka_consumer_books_only_integer_amounts_under_the_header_key(String handler)
      throws Exception {
    String prefix = "kmoney-" + handler + "-" + UUID.randomUUID().toString().substring(0, 6);
    String account = prefix + "-acc";
    String bootstrap = TestKafka.shared().bootstrapServers();
    String topic = TestKafka.shared().newTopic("kmoney", 1);
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            TestKafka.shared().producerConfig(),
            new StringSerializer(),
            new ByteArraySerializer())) {
      for (Send send : sends(prefix, account)) {
        ProducerRecord<String, byte[]> record =
            new ProducerRecord<>(topic, account, send.body().getBytes(StandardCharsets.UTF_8));
        if (send.key() != null) {
          record.headers().add("idempotency-key", send.key().getBytes(StandardCharsets.UTF_8));
        }
        producer.send(record).get();
      }
    }
    try (Inbox inbox = inbox()) {
      InboxKafkaConsumer<String, byte[]> consumer =
          KafkaConsumerCommand.consumer(
              Map.of(
                  "bootstrap.servers", bootstrap,
                  "group.id", prefix,
                  "auto.offset.reset", "earliest"),
              topic,
              "demo",
              inbox,
              handler.equals("at-once"));
      consumer.start();
      List<String> letters;
      try {
        letters = await("5 dead letters", () -> kafkaDeadLetters(bootstrap, topic), 5);
        await("2 payments", () -> payments(account), 2);
      } finally {
        consumer.close();
      }
      assertThat(PaymentsDatabase.balance(dataSource, account)).as("balance").isEqualTo(130);
      assertThat(payments(account)).as("payment rows").hasSize(2);
      assertThat(payments(account)).containsExactlyInAnyOrder(prefix + "-ok-1", prefix + "-ok-2");
      assertThat(letters).hasSize(5);
      assertThat(String.join("\n", letters))
          .contains("amountCents")
          .contains("paymentId")
          .contains("idempotency-key")
          .contains("strict JSON");
    }
  }

  @ParameterizedTest(name = "{0} handler")
  @ValueSource(strings = {"per-item", "at-once"})
  void the_rabbit_consumer_books_only_integer_amounts_under_the_message_key(String handler)
      throws Exception {
    String prefix = "rmoney-" + handler + "-" + UUID.randomUUID().toString().substring(0, 6);
    String account = prefix + "-acc";
    String queue = TestRabbit.newQueueName("rmoney");
    try (com.rabbitmq.client.Connection connection =
            TestRabbit.shared().connectionFactory().newConnection("rmoney");
        Inbox inbox = inbox()) {
      Channel channel = connection.createChannel();
      RabbitTopology.Names names = PaymentQueues.declare(channel, queue);
      channel.confirmSelect();
      for (Send send : sends(prefix, account)) {
        publish(channel, queue, send.key(), false, send.body());
      }
      // A payment whose key came in the idempotency-key header rather than as the messageId.
      String headerKey = prefix + "-hdr";
      publish(
          channel, queue, headerKey, true, "{\"account\":\"" + account + "\",\"amountCents\":20}");
      channel.waitForConfirmsOrDie(30_000);
      InboxRabbitConsumer consumer =
          RabbitConsumerCommand.builder(
                  connection,
                  queue,
                  "demo",
                  20,
                  names.deadLetterExchange(),
                  inbox,
                  handler.equals("at-once"))
              .build()
              .start();
      List<String> letters = new ArrayList<>();
      try {
        await(
            "5 dead letters",
            () -> {
              letters.addAll(rabbitDeadLetters(channel, names.deadLetterQueue()));
              return letters;
            },
            5);
        await("3 payments", () -> payments(account), 3);
      } finally {
        consumer.close();
      }
      assertThat(PaymentsDatabase.balance(dataSource, account)).as("balance").isEqualTo(150);
      assertThat(payments(account))
          .containsExactlyInAnyOrder(prefix + "-ok-1", prefix + "-ok-2", headerKey);
      assertThat(letters).hasSize(5);
      assertThat(String.join("\n", letters))
          .contains("amountCents")
          .contains("paymentId")
          .contains("strict JSON");
      channel.queueDelete(queue);
      channel.queueDelete(names.deadLetterQueue());
      channel.exchangeDelete(names.deadLetterExchange());
    }
  }

  private static void publish(
      Channel channel, String queue, String key, boolean asHeader, String body) throws Exception {
    AMQP.BasicProperties.Builder properties = new AMQP.BasicProperties.Builder().deliveryMode(2);
    if (key != null && asHeader) {
      properties.headers(Map.of("idempotency-key", key));
    } else if (key != null) {
      properties.messageId(key);
    }
    channel.basicPublish(
        "", queue, true, properties.build(), body.getBytes(StandardCharsets.UTF_8));
  }

  private static List<String> payments(String account) throws Exception {
    List<String> ids = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT payment_id FROM payments WHERE account_id = ?")) {
      ps.setString(1, account);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getString(1));
        }
      }
    }
    return ids;
  }

  /** Each dead letter as its reason and exception headers on one line. */
  private static List<String> kafkaDeadLetters(String bootstrap, String topic) {
    List<String> letters = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> reader =
        new KafkaConsumer<>(
            Map.of(
                "bootstrap.servers",
                bootstrap,
                "group.id",
                "reader-" + UUID.randomUUID(),
                "auto.offset.reset",
                "earliest"),
            new StringDeserializer(),
            new ByteArrayDeserializer())) {
      reader.subscribe(List.of(topic + ".DLT"));
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (System.nanoTime() < deadline && letters.size() < 5) {
        for (ConsumerRecord<String, byte[]> record : reader.poll(Duration.ofMillis(200))) {
          StringBuilder line = new StringBuilder();
          for (Header header : record.headers()) {
            if (header.key().equals(DeadLetterHeaders.REASON)
                || header.key().equals(DeadLetterHeaders.EXCEPTION_MESSAGE)) {
              line.append(new String(header.value(), StandardCharsets.UTF_8)).append(' ');
            }
          }
          letters.add(line.toString());
        }
      }
    }
    return letters;
  }

  private static List<String> rabbitDeadLetters(Channel channel, String queue) throws Exception {
    List<String> letters = new ArrayList<>();
    GetResponse got;
    while ((got = channel.basicGet(queue, true)) != null) {
      Map<String, Object> headers = got.getProps().getHeaders();
      letters.add(
          headers.get(DeadLetterHeaders.REASON)
              + " "
              + headers.get(DeadLetterHeaders.EXCEPTION_MESSAGE));
    }
    return letters;
  }

  private static <T> List<T> await(String what, Callable<List<T>> read, int atLeast)
      throws Exception {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (true) {
      List<T> seen = read.call();
      if (seen.size() >= atLeast) {
        return seen;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; saw " + seen);
      }
      Thread.sleep(200);
    }
  }
}
