package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The OpenAPI document publishes each @Idempotent operation's policy, from its configuration. */
class IdempotentOpenApiTest extends WebTestBase {

  @Test
  void an_idempotent_operation_documents_its_key_retention_problems_and_replay_header()
      throws Exception {
    HttpResponse<String> docs = client.get("/v3/api-docs");
    assertThat(docs.statusCode()).as(docs.body()).isEqualTo(200);
    JsonNode pay = json(docs.body()).at("/paths/~1pay/post");

    JsonNode key = header(pay, "Idempotency-Key");
    assertThat(key).as(pay.toString()).isNotNull();
    assertThat(key.get("required").asBoolean()).isTrue();
    // inbox.retention=36h in WebTestBase: the document says what the janitor enforces.
    assertThat(key.get("description").asText()).contains("PT36H").contains("sf-string");
    assertThat(pay.at("/x-idempotency/retention").asText()).isEqualTo("PT36H");
    assertThat(pay.at("/x-idempotency/retentionSeconds").asLong()).isEqualTo(36 * 3600);
    assertThat(pay.at("/x-idempotency/inFlightWait").asText()).isEqualTo("PT1S");

    for (String status : new String[] {"400", "409", "415", "422"}) {
      assertThat(pay.at("/responses/" + status + "/content").has("application/problem+json"))
          .as(status + " in " + pay.at("/responses"))
          .isTrue();
    }
    assertThat(pay.at("/responses/409/headers").has("Retry-After")).isTrue();
    JsonNode success =
        pay.at("/responses").properties().stream()
            .filter(e -> e.getKey().startsWith("2"))
            .map(e -> e.getValue())
            .findFirst()
            .orElseThrow();
    assertThat(success.at("/headers").has("Idempotent-Replayed")).as(success.toString()).isTrue();

    JsonNode optional = json(docs.body()).at("/paths/~1optional/post");
    assertThat(header(optional, "Idempotency-Key").get("required").asBoolean()).isFalse();
  }

  @Test
  void the_refusal_of_a_multipart_request_with_a_key_is_documented_as_it_is_answered()
      throws Exception {
    String boundary = "inbox-boundary";
    String note = "upload-" + UUID.randomUUID();
    HttpResponse<String> refused =
        client.postAs(
            "/upload",
            UUID.randomUUID().toString(),
            "multipart/form-data; boundary=" + boundary,
            "--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
                + note
                + "\r\n--"
                + boundary
                + "--\r\n");
    assertThat(refused.body())
        .as(refused.statusCode() + " " + refused.body())
        .contains("multipart-not-supported");
    assertEffects(note, 0);

    JsonNode documented =
        json(client.get("/v3/api-docs").body())
            .at("/paths/~1upload/post/responses/" + refused.statusCode());
    assertThat(documented.at("/content").has("application/problem+json"))
        .as(refused.statusCode() + " documented: " + documented)
        .isTrue();
    assertThat(documented.at("/description").asText()).contains("multipart");
  }

  @Test
  void an_operation_without_the_annotation_documents_no_key() throws Exception {
    JsonNode plain = json(client.get("/v3/api-docs").body()).at("/paths/~1plain/post");
    assertThat(plain.isMissingNode()).isFalse();
    assertThat(header(plain, "Idempotency-Key")).isNull();
    assertThat(plain.has("x-idempotency")).isFalse();
    assertThat(plain.at("/responses").has("409")).isFalse();
  }

  private static JsonNode header(JsonNode operation, String name) {
    for (JsonNode parameter : operation.path("parameters")) {
      if (parameter.path("in").asText().equals("header")
          && parameter.path("name").asText().equals(name)) {
        return parameter;
      }
    }
    return null;
  }
}
