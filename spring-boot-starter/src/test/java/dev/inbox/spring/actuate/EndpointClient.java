package dev.inbox.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.inbox.Claim;
import dev.inbox.Inbox;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.UUID;

/** Requests to the running server's Actuator over real HTTP, and the keys the tests start from. */
final class EndpointClient {
  private final HttpClient http = HttpClient.newHttpClient();
  private final String base;

  EndpointClient(int port) {
    this.base = "http://127.0.0.1:" + port;
  }

  Response get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET(), null);
  }

  Response post(String path, String json) {
    return post(path, json, null);
  }

  /** A POST of {@code json}; {@code user} is {@code name:password} for HTTP Basic, or null. */
  Response post(String path, String json, String user) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)),
        user);
  }

  private Response send(HttpRequest.Builder request, String user) {
    if (user != null) {
      request.header(
          "Authorization",
          "Basic " + Base64.getEncoder().encodeToString(user.getBytes(StandardCharsets.UTF_8)));
    }
    try {
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      return new Response(response.statusCode(), response.body());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A scope no other test uses. */
  static String newScope() {
    return "ops-" + UUID.randomUUID();
  }

  /** A key whose one leased attempt failed: FAILED, attempts 1. */
  static void failedKey(Inbox inbox, String scope, String key) {
    Claim claim = inbox.leases().claim(scope, key, null);
    assertThat(claim.isNew()).isTrue();
    inbox.leases().fail(claim.lease().orElseThrow(), "provider timed out");
  }

  /** A key under a live lease: IN_PROGRESS, its owner maybe calling the provider right now. */
  static void leasedKey(Inbox inbox, String scope, String key) {
    assertThat(inbox.leases().claim(scope, key, null).isNew()).isTrue();
  }

  record Response(int status, String body) {
    <T> T json(String path) {
      return JsonPath.read(body, path);
    }

    @Override
    public String toString() {
      return status + " " + body;
    }
  }
}
