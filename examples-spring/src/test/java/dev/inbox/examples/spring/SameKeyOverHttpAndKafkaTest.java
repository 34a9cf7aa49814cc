package dev.inbox.examples.spring;

import static dev.inbox.examples.spring.TestServices.PATIENCE;
import static dev.inbox.examples.spring.TestServices.awaitGroupCaughtUp;
import static dev.inbox.examples.spring.TestServices.balances;
import static dev.inbox.examples.spring.TestServices.channel;
import static dev.inbox.examples.spring.TestServices.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.Await;
import dev.inbox.testing.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * One payment id over HTTP ({@code Idempotency-Key}) and over Kafka (the {@code idempotency-key}
 * header) against the service's real {@code @Idempotent} endpoint and {@code @KafkaListener}, with
 * a real KRaft broker and PostgreSQL: one row and one credit per payment, whichever door is first,
 * and when both race.
 */
@SpringBootTest(
    classes = PaymentsServiceApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SameKeyOverHttpAndKafkaTest {
  private static final String NAME = TestKafka.shared().newTopic("spring-same-key", 4);
  private static final KafkaProducer<String, String> PRODUCER =
      new KafkaProducer<>(
          TestKafka.shared().producerConfig(), new StringSerializer(), new StringSerializer());

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestServices.properties(NAME).forEach((name, value) -> registry.add(name, () -> value));
    if (TestServices.databasePassword() != null) {
      registry.add("spring.datasource.password", TestServices::databasePassword);
    }
  }

  @AfterAll
  static void closeProducer() {
    PRODUCER.close();
  }

  @LocalServerPort int port;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void http_first_then_kafka_takes_effect_once() throws Exception {
    String id = "http-first-" + UUID.randomUUID();
    String account = "acc-" + id;

    HttpResponse<String> answer = post(id, account, 250);
    assertThat(answer.statusCode()).isEqualTo(201);
    assertThat(answer.headers().firstValue("Idempotent-Replayed")).isEmpty();
    send(id, account, 250);
    awaitGroupCaughtUp(NAME);

    assertThat(rows(id)).isEqualTo(1);
    assertThat(channel(id)).isEqualTo("http");
    assertThat(balances(account)).containsExactly(Map.entry(account, 250L));
    HttpResponse<String> balance =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/accounts/" + account))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(balance.statusCode()).isEqualTo(200);
    assertThat(balance.body()).contains("\"balanceCents\":250");
  }

  @Test
  void an_amount_with_a_fraction_of_a_cent_is_refused_and_nothing_is_written() throws Exception {
    String id = "fraction-" + UUID.randomUUID();
    HttpResponse<String> answer =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
                .header("Idempotency-Key", id)
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString("{\"account\":\"a\",\"amountCents\":1.5}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode()).isEqualTo(400);
    assertThat(rows(id)).isZero();
  }

  @Test
  void kafka_first_then_http_takes_effect_once_and_the_retry_is_answered_as_a_replay()
      throws Exception {
    String id = "kafka-first-" + UUID.randomUUID();
    String account = "acc-" + id;

    send(id, account, 330);
    Await.until("the Kafka record of " + id + " to take effect", PATIENCE, () -> rows(id) > 0);
    HttpResponse<String> answer = post(id, account, 330);

    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.headers().firstValue("Idempotent-Replayed")).contains("true");
    awaitGroupCaughtUp(NAME);
    assertThat(rows(id)).isEqualTo(1);
    assertThat(channel(id)).isEqualTo("kafka");
    assertThat(balances(account)).containsExactly(Map.entry(account, 330L));
  }

  /**
   * 24 payments; each is sent to Kafka and POSTed by three clients at the same moment. A 409 (the
   * key in flight on the other door past the endpoint's wait) is retried, as a client would.
   */
  @Test
  void twenty_four_keys_each_over_kafka_and_three_http_clients_at_once_take_effect_once()
      throws Exception {
    String run = "race-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    String account = run + "acc";
    int payments = 24;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Integer>> answers = new ArrayList<>();
      for (int i = 0; i < payments; i++) {
        String id = run + i;
        long amount = 100 + i;
        CountDownLatch start = new CountDownLatch(1);
        for (int client = 0; client < 3; client++) {
          answers.add(
              pool.submit(
                  () -> {
                    start.await();
                    return postUntilSettled(id, account, amount);
                  }));
        }
        start.countDown();
        send(id, account, amount);
      }
      for (Future<Integer> answer : answers) {
        assertThat(answer.get()).isIn(200, 201);
      }
    } finally {
      pool.shutdownNow();
    }
    awaitGroupCaughtUp(NAME);

    Map<String, Long> rowsById = new HashMap<>();
    long expected = 0;
    for (int i = 0; i < payments; i++) {
      rowsById.put(run + i, rows(run + i));
      expected += 100 + i;
    }
    assertThat(rowsById).hasSize(payments).allSatisfy((id, rows) -> assertThat(rows).isEqualTo(1));
    assertThat(balances(account)).containsExactly(Map.entry(account, expected));
  }

  private void send(String id, String account, long amount) throws Exception {
    ProducerRecord<String, String> record =
        new ProducerRecord<>(NAME, account, body(account, amount));
    record.headers().add("idempotency-key", id.getBytes(StandardCharsets.UTF_8));
    PRODUCER.send(record).get();
  }

  private HttpResponse<String> post(String id, String account, long amount) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
            .header("Idempotency-Key", id)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body(account, amount)))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** POSTs until the answer is not 409, and returns its status: 201, or 200 for a replay. */
  private int postUntilSettled(String id, String account, long amount) throws Exception {
    while (true) {
      HttpResponse<String> answer = post(id, account, amount);
      if (answer.statusCode() != 409) {
        boolean replayed =
            answer.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
        if (answer.statusCode() == 200 && !replayed) {
          throw new AssertionError("a 200 that is not a replay: " + answer.body());
        }
        return answer.statusCode();
      }
    }
  }

  private static String body(String account, long amount) {
    return "{\"account\":\"" + account + "\",\"amountCents\":" + amount + "}";
  }
}
