package dev.inbox.examples;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Posts payments to the example API the way a careful client does: the payment id as the
 * Idempotency-Key, and a retry of the same request after a 409 (still in flight), a 5xx or a lost
 * connection, until it gets a final answer.
 */
final class PaymentsHttpClient {
  private static final int MAX_TRIES = 50;

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final URI paymentsUri;
  private final String apiKey;

  PaymentsHttpClient(String baseUri, String apiKey) {
    this.paymentsUri = URI.create(baseUri + "/payments");
    this.apiKey = apiKey;
  }

  /** The final response: 201 for the first request or its replay; throws when none came. */
  HttpResponse<String> post(Payment payment) throws IOException, InterruptedException {
    String body =
        "{\"account\":\"" + payment.account() + "\",\"amountCents\":" + payment.amountCents() + "}";
    HttpRequest request =
        HttpRequest.newBuilder(paymentsUri)
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", payment.paymentId())
            .header("X-Api-Key", apiKey)
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
            .build();
    IOException lastFailure = null;
    for (int attempt = 1; attempt <= MAX_TRIES; attempt++) {
      try {
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 409 && response.statusCode() < 500) {
          return response;
        }
      } catch (IOException e) {
        lastFailure = e;
      }
      Thread.sleep(Math.min(1_000, 20L * attempt));
    }
    throw new IOException(
        "no final answer for payment " + payment.paymentId() + " after " + MAX_TRIES + " tries",
        lastFailure);
  }
}
