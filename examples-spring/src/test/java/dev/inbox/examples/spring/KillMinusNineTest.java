package dev.inbox.examples.spring;

import static dev.inbox.examples.spring.TestServices.PATIENCE;
import static dev.inbox.examples.spring.TestServices.balances;
import static dev.inbox.examples.spring.TestServices.distinctPayments;
import static dev.inbox.examples.spring.TestServices.groupCaughtUp;
import static dev.inbox.examples.spring.TestServices.paymentRows;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inbox.testing.Await;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.TestKafka;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The Spring service as a child JVM, killed with {@code kill -9} while it applies a stream of Kafka
 * records and RabbitMQ messages (each transaction held open for a moment, so that the kill finds
 * some in flight), the rest of the stream sent while it is dead, then restarted: every payment
 * takes effect exactly once, and every record and message is consumed and acknowledged.
 */
class KillMinusNineTest {
  private static final int PAYMENTS = 240;
  private static final int ACCOUNTS = 6;

  private record Send(int payment, boolean kafka) {}

  @Test
  void the_service_killed_mid_stream_and_restarted_applies_240_payments_exactly_once()
      throws Exception {
    String name = TestKafka.shared().newTopic("spring-kill", 4);
    String run = "kill-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    Random random = new Random(11);
    long[] amounts = new long[PAYMENTS];
    List<Send> sends = new ArrayList<>();
    for (int i = 0; i < PAYMENTS; i++) {
      amounts[i] = 1 + random.nextInt(10_000);
      sends.add(new Send(i, random.nextBoolean()));
      if (random.nextInt(4) == 0) { // a quarter are re-sent, on either broker
        sends.add(new Send(i, random.nextBoolean()));
      }
    }
    Collections.shuffle(sends, random);
    List<Send> beforeKill = sends.subList(0, sends.size() / 2);
    List<Send> whileDead = sends.subList(sends.size() / 2, sends.size());

    try (Connection rabbit = TestRabbit.shared().connectionFactory().newConnection();
        KafkaProducer<String, String> kafka =
            new KafkaProducer<>(
                TestKafka.shared().producerConfig(),
                new StringSerializer(),
                new StringSerializer())) {
      Channel channel = rabbit.createChannel();
      // As the service declares it: durable, so that the messages outlive the service's death.
      channel.queueDeclare(name, true, false, false, null);
      channel.confirmSelect();
      try {
        publish(beforeKill, run, amounts, name, kafka, channel);

        long appliedAtKill;
        try (ChildJvm service = startService(name)) {
          awaitApplied(service, run, 40);
          service.kill9();
          appliedAtKill = distinctPayments(run);
        }
        publish(whileDead, run, amounts, name, kafka, channel);

        try (ChildJvm service = startService(name)) {
          awaitApplied(service, run, PAYMENTS);
          Await.until("every record consumed", PATIENCE, () -> groupCaughtUp(name));
          Await.until(
              "the queue drained",
              PATIENCE,
              () -> channel.queueDeclarePassive(name).getMessageCount() == 0);
          // A graceful stop lets in-flight messages finish and be acknowledged; one that was not
          // would be back in the queue below.
          service.process().destroy();
          assertThat(service.process().waitFor(3, TimeUnit.MINUTES))
              .as("the service stops on SIGTERM")
              .isTrue();
        }
        System.out.printf(
            "killed with %d of %d payments applied; %d sends in all%n",
            appliedAtKill, PAYMENTS, sends.size());

        assertThat(channel.queueDeclarePassive(name).getMessageCount())
            .as("messages never acknowledged")
            .isZero();
        assertThat(channel.queueDeclarePassive(name + ".dlq").getMessageCount())
            .as("dead letters")
            .isZero();
        assertThat(groupCaughtUp(name)).as("every record committed").isTrue();
        assertThat(paymentRows(run)).as("payment rows").isEqualTo(PAYMENTS);
        assertThat(distinctPayments(run)).as("distinct payments").isEqualTo(PAYMENTS);
        assertThat(balances(run)).isEqualTo(expectedBalances(run, amounts));
      } finally {
        channel.queueDelete(name);
        channel.queueDelete(name + ".dlq");
      }
    }
  }

  private static ChildJvm startService(String name) throws Exception {
    List<String> args = new ArrayList<>();
    TestServices.properties(name).forEach((key, value) -> args.add("--" + key + "=" + value));
    args.add("--server.port=0");
    args.add("--payments.hold=20ms");
    args.add("--logging.level.root=warn");
    // The killed service's consumers leave the group only when their session expires: 10 s, not
    // the default 45 s, before the restarted service gets their partitions.
    args.add("--spring.kafka.consumer.properties.session.timeout.ms=10000");
    return ChildJvm.start(PaymentsServiceApplication.class, args);
  }

  private static void awaitApplied(ChildJvm service, String run, long payments) throws Exception {
    Await.until(
        payments + " payments applied",
        PATIENCE,
        () -> {
          if (!service.isAlive()) {
            throw new AssertionError("the service died:\n" + service.output());
          }
          return distinctPayments(run) >= payments;
        });
  }

  private static void publish(
      List<Send> sends,
      String run,
      long[] amounts,
      String name,
      KafkaProducer<String, String> kafka,
      Channel rabbit)
      throws Exception {
    for (Send send : sends) {
      String id = run + send.payment();
      String account = account(run, send.payment());
      byte[] body =
          ("{\"account\":\"" + account + "\",\"amountCents\":" + amounts[send.payment()] + "}")
              .getBytes(StandardCharsets.UTF_8);
      if (send.kafka()) {
        ProducerRecord<String, String> record =
            new ProducerRecord<>(name, account, new String(body, StandardCharsets.UTF_8));
        record.headers().add("idempotency-key", id.getBytes(StandardCharsets.UTF_8));
        kafka.send(record);
      } else {
        rabbit.basicPublish(
            "",
            name,
            new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
            body);
      }
    }
    kafka.flush();
    rabbit.waitForConfirmsOrDie(60_000);
  }

  private static String account(String run, int payment) {
    return run + "acc-" + (payment % ACCOUNTS);
  }

  private static Map<String, Long> expectedBalances(String run, long[] amounts) {
    Map<String, Long> balances = new HashMap<>();
    for (int i = 0; i < amounts.length; i++) {
      balances.merge(account(run, i), amounts[i], Long::sum);
    }
    return balances;
  }
}
