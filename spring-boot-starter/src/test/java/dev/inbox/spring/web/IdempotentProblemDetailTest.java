package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.http.ProblemDetail;

/**
 * The refusals of an @Idempotent endpoint are Spring {@link ProblemDetail}s: read back by the
 * application's own converters, with every standard member and the filter's {@code rule}, in an
 * application that customises nothing (the starter renders them). The 409 is checked in {@link
 * IdempotentEndpointTest}, where a request is held in flight.
 */
class IdempotentProblemDetailTest extends WebTestBase {

  @Test
  void a_missing_key_is_a_400_problem_detail_with_the_request_path_as_instance() throws Exception {
    String body = "pd-missing-" + UUID.randomUUID();
    HttpResponse<byte[]> response = client.postForBytes("/pay", null, body);

    ProblemDetail problem = assertProblemDetail(response, 400, "idempotency-key-missing");
    assertThat(problem.getTitle()).isEqualTo("Bad Request");
    assertThat(problem.getDetail()).isEqualTo("this endpoint requires an Idempotency-Key header");
    assertEffects(body, 0);
  }

  @Test
  void the_same_key_with_another_request_is_a_422_problem_detail_naming_the_key() throws Exception {
    String key = UUID.randomUUID().toString();
    assertThat(client.post("/pay", key, "pd-first-" + key).statusCode()).isEqualTo(201);

    HttpResponse<byte[]> response = client.postForBytes("/pay", key, "pd-second-" + key);

    ProblemDetail problem = assertProblemDetail(response, 422, "idempotency-key-mismatch");
    assertThat(problem.getTitle()).isEqualTo("Unprocessable Content");
    assertThat(problem.getDetail()).contains("'" + key + "'").contains("different request");
    assertEffects("pd-second-" + key, 0);
  }

  @Test
  void a_non_ascii_key_gets_a_problem_detail_in_well_formed_utf_8() throws Exception {
    String body = "pd-non-ascii-" + UUID.randomUUID();
    // "pay-é-ü-1" as UTF-8 bytes, as curl sends it; the container reads them as ISO-8859-1. (A
    // byte of a C1 control, as in the UTF-8 of '€', is refused by Spring Security's firewall
    // before the endpoint sees the request.)
    byte[] key = "pay-\u00e9-\u00fc-1".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    String raw = client.raw("/pay", key, body);
    assertThat(WebClient.status(raw)).as(raw).isEqualTo(400);
    String head = raw.substring(0, raw.indexOf("\r\n\r\n"));
    assertThat(head).as(raw).containsIgnoringCase("Content-Type: application/problem+json");
    byte[] bytes =
        raw.substring(raw.indexOf("\r\n\r\n") + 4)
            .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    // Connection: close and no chunking: the rest of the stream is the body.
    ProblemDetail problem = problemDetail(bytes);
    assertThat(problem.getStatus()).isEqualTo(400);
    assertThat(problem.getProperties()).containsEntry("rule", "idempotency-key-not-ascii");
    assertThat(problem.getInstance()).isEqualTo(URI.create("/pay"));
    assertEffects(body, 0);
  }
}
