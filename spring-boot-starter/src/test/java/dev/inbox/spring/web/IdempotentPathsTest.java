package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Hostile spellings of an @Idempotent path and key. The filter asks the application's own handler
 * mappings which method a request reaches, so every spelling that reaches the method is protected
 * (it needs the key, and the key's first answer is replayed) and none runs it a second time.
 */
class IdempotentPathsTest extends WebTestBase {

  @Test
  void every_spelling_that_reaches_the_method_needs_the_key() throws Exception {
    String body = "unkeyed-" + UUID.randomUUID();
    for (String target : List.of("/pay", "/%70ay", "/pay;jsessionid=abc123", "/pay;v=1")) {
      String response = client.raw(target, null, body);
      assertThat(WebClient.status(response)).as(target + "\n" + response).isEqualTo(400);
    }
    assertEffects(body, 0);
  }

  @Test
  void a_retry_under_another_spelling_of_the_path_never_runs_the_method_again() throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "spelled-" + key;
    assertThat(client.post("/pay", key, body).statusCode()).isEqualTo(201);
    byte[] keyBytes = key.getBytes(StandardCharsets.US_ASCII);
    // Spellings the container and Spring MVC route to the method: the first answer, replayed.
    for (String target : List.of("/%70ay", "/pay;jsessionid=abc123", "/p%61y")) {
      String response = client.raw(target, keyBytes, body);
      assertThat(WebClient.status(response)).as(target + "\n" + response).isEqualTo(201);
      assertThat(response).as(target).containsIgnoringCase("Idempotent-Replayed: true");
    }
    // Dot segments and empty segments: refused (here by Spring Security's firewall, which runs
    // first); whatever refuses them, none may reach the method unprotected.
    for (String target : List.of("/pay/../pay", "//pay", "/./pay")) {
      String response = client.raw(target, keyBytes, body);
      int status = WebClient.status(response);
      if (status < 400) {
        assertThat(response).as(target).containsIgnoringCase("Idempotent-Replayed: true");
      }
    }
    // A ';' parameter is part of the request (the application may read it): another request.
    String withParameter = client.raw("/pay;v=1", keyBytes, body);
    assertThat(WebClient.status(withParameter)).as(withParameter).isEqualTo(422);
    assertEffects(body, 1);
  }

  @Test
  void a_non_ascii_key_is_refused_before_anything_is_claimed() throws Exception {
    String body = "non-ascii-" + UUID.randomUUID();
    // "pay-é-1" as UTF-8, as curl sends it.
    byte[] key = "pay-\u00e9-1".getBytes(StandardCharsets.UTF_8);
    String response = client.raw("/pay", key, body);
    assertThat(WebClient.status(response)).as(response).isEqualTo(400);
    assertThat(response).contains("idempotency-key-not-ascii");
    assertEffects(body, 0);
  }
}
