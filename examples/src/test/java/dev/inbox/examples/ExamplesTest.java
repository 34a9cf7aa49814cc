package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.kafka.InboxKafkaConsumer;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestKafka;
import dev.inbox.testing.TestRabbit;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ExamplesTest {

  @Test
  void demoEndsWithExactlyOnceAndExitCodeZero() throws Exception {
    String output = runDemo("1500", "--amqp-uri", TestRabbit.shared().uri());
    assertThat(output).contains("killed with kill -9");
  }

  /** The path of a machine without RabbitMQ: the demo's own Qpid Broker-J. */
  @Test
  void demoRunsOnTheEmbeddedAmqpBrokerToo() throws Exception {
    String output = runDemo("600", "--embedded-amqp");
    assertThat(output).contains("Apache Qpid Broker-J").containsPattern("rabbit +\\d+");
  }

  /** Runs the demo on a database of its own, dropped afterwards, and asserts that it passed. */
  private static String runDemo(String count, String... amqp) throws Exception {
    try (ScratchDatabase db = ScratchDatabase.create("demo")) {
      PrintStream original = System.out;
      ByteArrayOutputStream captured = new ByteArrayOutputStream();
      int exit;
      try {
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        List<String> args =
            new ArrayList<>(
                List.of(
                    "demo",
                    "--count",
                    count,
                    "--jdbc-url",
                    db.jdbcUrl,
                    "--bootstrap-servers",
                    TestKafka.shared().bootstrapServers(),
                    "--timeout",
                    "180"));
        args.addAll(List.of(amqp));
        exit = InboxExamples.commandLine().execute(args.toArray(String[]::new));
      } finally {
        System.setOut(original);
      }
      String output = captured.toString(StandardCharsets.UTF_8);
      assertThat(output).contains("EXACTLY ONCE");
      assertThat(exit).as(output).isZero();
      return output;
    }
  }

  @Test
  void aPaymentSentOverHttpAndOverKafkaWithTheSameKeyTakesEffectOnce() throws Exception {
    try (HikariDataSource dataSource = TestDataSources.pool(10)) {
      String schema = TestDataSources.newSchema("cross");
      InboxSettings settings =
          InboxSettings.builder().schema(schema).janitorInterval(Duration.ZERO).build();
      PaymentsDatabase.migrate(dataSource, settings);
      try (Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).build();
          PaymentsApi api = PaymentsApi.start(0, dataSource, inbox, Map.of("k", "tenant-1"))) {
        String topic = TestKafka.shared().newTopic("cross", 1);
        Payment payment = new Payment("pay-cross-1", "acc-cross", 700);
        PaymentsHttpClient http = new PaymentsHttpClient(api.baseUri(), "k");
        assertThat(http.post(payment).statusCode()).isEqualTo(201);
        KafkaProducerCommand.send(TestKafka.shared().bootstrapServers(), topic, List.of(payment));
        InboxKafkaConsumer<String, byte[]> consumer =
            InboxKafkaConsumer.builder(new StringDeserializer(), new ByteArrayDeserializer())
                .properties(
                    Map.of(
                        "bootstrap.servers", TestKafka.shared().bootstrapServers(),
                        "group.id", "cross",
                        "auto.offset.reset", "earliest"))
                .topics(topic)
                .inbox(inbox)
                .scope("tenant-1")
                .handler(
                    (record, tx) ->
                        PaymentsDatabase.apply(
                            tx, Payment.fromJson(record.value(), payment.paymentId()), "kafka"))
                .build()
                .start();
        try {
          long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
          while (inbox.admin().find("tenant-1", payment.paymentId()).isEmpty()
              || consumerLag(topic) > 0) {
            assertThat(System.nanoTime()).as("the consumer's commit").isLessThan(deadline);
            Thread.sleep(100);
          }
        } finally {
          consumer.close();
        }
        assertThat(http.post(payment).headers().firstValue("Idempotent-Replayed")).contains("true");
      }
      assertThat(PaymentsDatabase.balance(dataSource, "acc-cross")).isEqualTo(700);
    }
  }

  @Test
  void badFlagsGetAClearErrorNamingTheFlag() {
    StringWriter err = new StringWriter();
    CommandLine cli = InboxExamples.commandLine();
    cli.setErr(new PrintWriter(err));
    assertThat(cli.execute("demo", "--count", "-5")).isEqualTo(2);
    assertThat(err.toString()).contains("--count");
    err.getBuffer().setLength(0);
    assertThat(cli.execute("http-server", "--api-key", "nokey")).isEqualTo(2);
    assertThat(err.toString()).contains("--api-key");
    err.getBuffer().setLength(0);
    assertThat(cli.execute("http-server", "--payment-delay-ms", "-1")).isEqualTo(2);
    assertThat(err.toString()).contains("--payment-delay-ms must not be negative, but was -1");
    err.getBuffer().setLength(0);
    assertThat(cli.execute("demo", "--embedded-amqp", "--amqp-uri", "amqp://localhost"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--amqp-uri or --embedded-amqp");
    for (String consumer : new String[] {"kafka-consumer", "rabbit-consumer"}) {
      err.getBuffer().setLength(0);
      assertThat(cli.execute(consumer, "--handler", "batch")).isEqualTo(2);
      assertThat(err.toString())
          .contains("--handler must be one of per-item, at-once, but was 'batch'");
    }
  }

  private static long consumerLag(String topic) throws Exception {
    try (var admin =
        org.apache.kafka.clients.admin.Admin.create(
            Map.of("bootstrap.servers", TestKafka.shared().bootstrapServers()))) {
      var committed = admin.listConsumerGroupOffsets("cross").partitionsToOffsetAndMetadata().get();
      var offset = committed.get(new org.apache.kafka.common.TopicPartition(topic, 0));
      return offset == null ? 1 : 1 - offset.offset();
    }
  }
}
