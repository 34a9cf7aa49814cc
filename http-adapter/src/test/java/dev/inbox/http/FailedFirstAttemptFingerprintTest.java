package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The fingerprint recorded by a key's first attempt sticks to the key even when that attempt
 * failed: a retry must be the same request, and a different request under the key is a mismatch,
 * not a new payment (issue 18, item 8). Recording that fingerprint is consumer-core's work; this is
 * the HTTP-level proof of it.
 */
class FailedFirstAttemptFingerprintTest extends FilterTestBase {
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void a_key_whose_first_attempt_failed_refuses_another_request_and_still_runs_the_same_one()
      throws Exception {
    // X-Fail is not in the fingerprint, so that the third request is the first one again.
    HttpResponse<String> failed = post("K", "100", "throw");
    assertThat(failed.statusCode()).as("the handler threw").isEqualTo(500);
    assertThat(effects.count()).as("the failed attempt's write was rolled back").isZero();

    HttpResponse<String> other = post("K", "999", null);
    assertProblem(
        RawHttp.Response.of(other),
        422,
        "idempotency-key-mismatch",
        "was already used with a different request");
    assertThat(effects.count()).as("effect rows after another request under the key").isZero();

    HttpResponse<String> same = post("K", "100", null);
    assertThat(same.statusCode()).as(same.body()).isEqualTo(201);
    assertThat(RawHttp.Response.of(same).replayed()).isFalse();
    assertThat(effects.count()).as("effect rows").isEqualTo(1);
    assertThat(effects.sum()).as("the amount of the first request").isEqualTo(100);
  }

  private HttpResponse<String> post(String key, String body, String fail) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(server.uri("/payments")))
            .timeout(Duration.ofSeconds(30))
            .header("X-Api-Key", "key-a")
            .header("Content-Type", "text/plain")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (fail != null) {
      request.header("X-Fail", fail);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
