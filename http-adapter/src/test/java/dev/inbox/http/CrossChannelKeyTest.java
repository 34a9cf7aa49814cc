package dev.inbox.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.AdminAction;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.ItemResult;
import dev.inbox.ItemStatus;
import dev.inbox.SettleResult;
import dev.inbox.StoredResult;
import dev.inbox.internal.Fingerprints;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One payment key used over HTTP and by a message consumer in the same scope: the request's
 * fingerprint and the message's are of different kinds, so whichever comes second is a duplicate,
 * never a mismatch, and the payment takes effect once.
 */
class CrossChannelKeyTest extends FilterTestBase {
  private static final String SCOPE = "tenant-a";

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** What the Kafka and RabbitMQ consumers do by default with a message whose body is 100. */
  private ItemStatus consume(String key) {
    List<ItemResult<String>> results =
        inbox
            .executeBatch(
                SCOPE,
                List.of(new BatchItem<>(key, Fingerprints.ofMessage("100".getBytes(UTF_8)), "100")),
                BatchFailurePolicy.STOP,
                (item, tx) -> {
                  effects.apply(tx, item.key(), Long.parseLong(item.payload()));
                  return null;
                })
            .items();
    return results.get(0).status();
  }

  private HttpResponse<String> post(String key) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create(server.uri("/payments")))
            .timeout(Duration.ofSeconds(30))
            .header("X-Api-Key", "key-a")
            .header("Content-Type", "text/plain")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString("100"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void a_key_a_consumer_settled_is_answered_as_already_processed_over_http() throws Exception {
    assertThat(consume("K")).isEqualTo(ItemStatus.COMPLETED);

    HttpResponse<String> http = post("K");
    assertThat(http.statusCode()).as(http.body()).isEqualTo(200);
    assertThat(http.body()).contains("already-processed");
    assertThat(effects.count()).as("effect rows").isEqualTo(1);
  }

  @Test
  void a_key_taken_over_http_is_a_duplicate_for_a_consumer() throws Exception {
    HttpResponse<String> http = post("K");
    assertThat(http.statusCode()).as(http.body()).isEqualTo(201);

    assertThat(consume("K")).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects.count()).as("effect rows").isEqualTo(1);
  }

  @Test
  void a_key_an_operator_settled_replays_the_operators_result_over_http_and_for_a_consumer()
      throws Exception {
    StoredResult reconciled =
        StoredResult.of(
            201,
            Map.of("Content-Type", List.of("application/json")),
            "{\"payment\":\"pay_1\",\"reconciled\":true}".getBytes(UTF_8));
    assertThat(
            inbox
                .admin()
                .settle(
                    SCOPE, "K", reconciled, AdminAction.of("alice", "provider confirmed pay_1")))
        .isEqualTo(SettleResult.SETTLED);

    HttpResponse<String> retry = post("K");
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo("{\"payment\":\"pay_1\",\"reconciled\":true}");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(retry.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));

    assertThat(consume("K")).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects.count()).as("effect rows: the handler never ran").isZero();
  }
}
