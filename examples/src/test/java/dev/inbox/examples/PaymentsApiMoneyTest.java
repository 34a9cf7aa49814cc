package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.testing.TestDataSources;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The payments API takes exactly the money a request names, or answers 400: amounts are JSON
 * integers, the JSON is strict, and the payment id is the Idempotency-Key.
 */
class PaymentsApiMoneyTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static HikariDataSource dataSource;
  private static Inbox inbox;
  private static PaymentsApi api;

  @BeforeAll
  static void start() throws Exception {
    dataSource = TestDataSources.pool(4);
    String schema = TestDataSources.newSchema("money");
    InboxSettings settings =
        InboxSettings.builder().schema(schema).janitorInterval(Duration.ZERO).build();
    PaymentsDatabase.migrate(dataSource, settings);
    inbox = Inbox.builder().dataSource(dataSource).settings(settings).build();
    api = PaymentsApi.start(0, dataSource, inbox, Map.of("k", "tenant-1"));
  }

  @AfterAll
  static void stop() throws Exception {
    api.close();
    inbox.close();
    dataSource.close();
  }

  @ParameterizedTest(name = "amountCents {0}")
  @ValueSource(
      strings = {
        "1.99",
        "2.75",
        "1.0",
        "1e2",
        "\"100\"",
        "9223372036854775808",
        "0",
        "-5",
        "true",
        "null"
      })
  void an_amount_that_is_not_a_positive_json_integer_is_a_400_naming_the_field(String amount)
      throws Exception {
    String account = "money-acc-amount-" + Math.abs(amount.hashCode());
    HttpResponse<String> response =
        post(
            "money-amount-" + amount,
            "{\"account\":\"" + account + "\",\"amountCents\":" + amount + "}");
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    assertThat(response.headers().firstValue("Content-Type")).contains("application/problem+json");
    assertThat(response.body()).contains("amountCents");
    assertThat(PaymentsDatabase.balance(dataSource, account)).as("balance").isNull();
  }

  @Test
  void a_duplicate_field_is_a_400_and_books_nothing() throws Exception {
    HttpResponse<String> response =
        post(
            "money-dup-1",
            "{\"account\":\"money-acc-dup\",\"amountCents\":1,\"amountCents\":100000}");
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    assertThat(response.body()).contains("amountCents");
    assertThat(PaymentsDatabase.balance(dataSource, "money-acc-dup")).isNull();
  }

  @ParameterizedTest(name = "trailing {0}")
  @ValueSource(strings = {" x", "{}", "]", ",{\"amountCents\":5}"})
  void trailing_garbage_is_a_400_and_books_nothing(String trailing) throws Exception {
    String account = "money-acc-trail-" + Math.abs(trailing.hashCode());
    HttpResponse<String> response =
        post(
            "money-trail-" + Math.abs(trailing.hashCode()),
            "{\"account\":\"" + account + "\",\"amountCents\":100}" + trailing);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    assertThat(PaymentsDatabase.balance(dataSource, account)).isNull();
  }

  @Test
  void a_body_payment_id_that_differs_from_the_key_is_a_400_and_books_nothing() throws Exception {
    String body = "{\"paymentId\":\"pay-shared\",\"account\":\"money-acc-id\",\"amountCents\":500}";
    HttpResponse<String> first = post("money-key-a", body);
    HttpResponse<String> second = post("money-key-b", body);
    assertThat(first.statusCode()).as(first.body()).isEqualTo(400);
    assertThat(second.statusCode()).as(second.body()).isEqualTo(400);
    assertThat(first.body()).contains("paymentId");
    assertThat(PaymentsDatabase.balance(dataSource, "money-acc-id")).as("balance").isNull();
  }

  @Test
  void a_valid_payment_books_its_exact_amount_once() throws Exception {
    String same =
        "{\"paymentId\":\"money-pay-ok\",\"account\":\"money-acc-ok\",\"amountCents\":250}";
    assertThat(post("money-pay-ok", same).statusCode()).isEqualTo(201);
    assertThat(post("money-pay-ok", same).statusCode()).isEqualTo(201);
    assertThat(
            post(
                    "money-pay-ok-2",
                    "{\"account\":\"money-acc-ok\",\"amountCents\":9223372036854775}")
                .statusCode())
        .isEqualTo(201);
    assertThat(PaymentsDatabase.balance(dataSource, "money-acc-ok"))
        .isEqualTo(250L + 9_223_372_036_854_775L);
  }

  private static HttpResponse<String> post(String key, String body) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(URI.create(api.baseUri() + "/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("X-Api-Key", "k")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
