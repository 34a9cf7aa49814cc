package dev.inbox.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.AdminAction;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
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
 * A key an operator settled (a payment reconciled with the provider by hand) answers an HTTP retry
 * with the operator's status, headers and body as a replay, and a consumer's delivery as a
 * duplicate; the handler never runs.
 */
class SettledKeyReplayTest extends FilterTestBase {
  private static final String SCOPE = "tenant-a";
  private static final StoredResult RECONCILED =
      StoredResult.of(
          201,
          Map.of("Content-Type", List.of("application/json")),
          "{\"payment\":\"pay_1\",\"reconciled\":true}".getBytes(UTF_8));

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

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

  private ItemStatus consume(String key) {
    return inbox
        .executeBatch(
            SCOPE,
            List.of(new BatchItem<>(key, Fingerprints.ofMessage("100".getBytes(UTF_8)), "100")),
            BatchFailurePolicy.STOP,
            (item, tx) -> {
              effects.apply(tx, item.key(), Long.parseLong(item.payload()));
              return null;
            })
        .items()
        .get(0)
        .status();
  }

  @Test
  void a_settled_key_replays_the_operators_result_over_http_and_is_a_duplicate_for_a_consumer()
      throws Exception {
    assertThat(
            inbox
                .admin()
                .settle(
                    SCOPE,
                    "K",
                    RECONCILED,
                    AdminAction.of("alice", "provider confirmed pay_1 by phone")))
        .isEqualTo(SettleResult.SETTLED);

    HttpResponse<String> retry = post("K");
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo("{\"payment\":\"pay_1\",\"reconciled\":true}");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(retry.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));

    assertThat(consume("K")).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(post("K").statusCode()).isEqualTo(201);
    assertThat(effects.count()).as("effect rows: the handler never ran").isZero();
  }
}
