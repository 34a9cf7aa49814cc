package dev.inbox.spring.web;

import dev.inbox.InboxKeys;
import dev.inbox.http.IdempotencyFilter;
import dev.inbox.http.spi.RequestOutcome;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.web.method.HandlerMethod;

/**
 * Publishes each {@link Idempotent} operation's idempotency policy in its OpenAPI description, as
 * the IETF draft requires a server to: the {@code Idempotency-Key} header with its format and
 * retention, the 400, 409, 415 and 422 problem responses (at the statuses the filter answers with,
 * from {@link RequestOutcome#problemStatus()}), and the {@code Idempotent-Replayed} header of a
 * replay. Every value comes from the configuration the endpoint enforces (the annotation, {@code
 * inbox.web.*} and the inbox's retention), and the policy is repeated as data in the operation's
 * {@code x-idempotency} extension.
 */
final class IdempotentOperations implements OperationCustomizer {
  static final String POLICY_EXTENSION = "x-idempotency";

  private static final String KEY_FORMAT =
      "an RFC 8941 sf-string (\"...\") or bare token of printable ASCII, at most "
          + InboxKeys.MAX_LENGTH
          + " characters, such as a UUID";

  private final IdempotentEndpoints endpoints;
  private final Duration retention;
  private final InboxWebProperties properties;

  IdempotentOperations(
      IdempotentEndpoints endpoints, Duration retention, InboxWebProperties properties) {
    this.endpoints = endpoints;
    this.retention = retention;
    this.properties = properties;
  }

  @Override
  public Operation customize(Operation operation, HandlerMethod handler) {
    endpoints.of(handler.getMethod()).ifPresent(endpoint -> describe(operation, endpoint));
    return operation;
  }

  private void describe(Operation operation, IdempotentEndpoint endpoint) {
    String header = IdempotencyFilter.DEFAULT_HEADER_NAME;
    String scope =
        endpoint.scopeResolver().isEmpty()
            ? "the authenticated principal"
                + (properties.getAnonymousScope() == null
                        || properties.getAnonymousScope().isEmpty()
                    ? " (an unauthenticated request gets 401)"
                    : " (unauthenticated requests share the scope '"
                        + properties.getAnonymousScope()
                        + "')")
            : "the scope resolver '" + endpoint.scopeResolver() + "'";
    operation.addParametersItem(
        new HeaderParameter()
            .name(header)
            .required(endpoint.keyRequired())
            .description(
                "Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): "
                    + KEY_FORMAT
                    + ". A key is kept for "
                    + retention
                    + " after its request completed, per "
                    + scope
                    + "; a retry within that time gets the first response again, with "
                    + IdempotencyFilter.REPLAYED_HEADER
                    + ": true, and the operation does not run again. A retry while the first"
                    + " request runs waits up to "
                    + properties.getInFlightWait()
                    + ", then gets 409.")
            .schema(new StringSchema().minLength(1).example("\"8e03978e-40d5-43e8-bc93\"")));

    Map<String, Object> policy = new LinkedHashMap<>();
    policy.put("header", header);
    policy.put("keyRequired", endpoint.keyRequired());
    policy.put("keyFormat", KEY_FORMAT);
    policy.put("retention", retention.toString());
    policy.put("retentionSeconds", retention.toSeconds());
    policy.put("inFlightWait", properties.getInFlightWait().toString());
    policy.put("scope", scope);
    policy.put("replayHeader", IdempotencyFilter.REPLAYED_HEADER);
    operation.addExtension(POLICY_EXTENSION, policy);

    ApiResponses responses = operation.getResponses();
    if (responses == null) {
      responses = new ApiResponses();
      operation.setResponses(responses);
    }
    responses.forEach(
        (status, response) -> {
          if (status.startsWith("2") || status.startsWith("3") || status.equals("default")) {
            response.addHeaderObject(
                IdempotencyFilter.REPLAYED_HEADER,
                new Header()
                    .description(
                        "true on a replayed response: the first response to this "
                            + header
                            + ", stored and sent again")
                    .schema(new StringSchema()._enum(List.of("true"))));
          }
        });
    problem(
        responses,
        RequestOutcome.INVALID_KEY,
        (endpoint.keyRequired() ? "The " + header + " header is missing," : "The " + header)
            + " repeated or malformed (not "
            + KEY_FORMAT
            + ").",
        null);
    problem(
        responses,
        RequestOutcome.CONFLICT,
        "A request with this "
            + header
            + " is still being processed; retry after the Retry-After seconds.",
        new Header().description("seconds to wait").schema(new IntegerSchema()));
    problem(
        responses,
        RequestOutcome.UNSUPPORTED_MEDIA_TYPE,
        "The request body is multipart/*, which cannot be sent with "
            + header
            + " (rule multipart-not-supported); send another content type, or no "
            + header
            + ".",
        null);
    problem(
        responses,
        RequestOutcome.MISMATCH,
        "This "
            + header
            + " was already used with a different request (method, path, query, content type or"
            + " body), or its requests failed too often; use a new key.",
        null);
  }

  /**
   * Adds the problem response at the status the filter answers the outcome with, or appends to the
   * one the application documents already.
   */
  private static void problem(
      ApiResponses responses, RequestOutcome outcome, String description, Header retryAfter) {
    String status = Integer.toString(outcome.problemStatus().orElseThrow());
    ApiResponse existing = responses.get(status);
    if (existing != null) {
      existing.setDescription(
          existing.getDescription() == null
              ? description
              : existing.getDescription() + " Or: " + description);
      return;
    }
    ApiResponse response =
        new ApiResponse()
            .description(description)
            .content(
                new Content()
                    .addMediaType(
                        org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON_VALUE,
                        new MediaType().schema(problemSchema())));
    if (retryAfter != null) {
      response.addHeaderObject("Retry-After", retryAfter);
    }
    responses.addApiResponse(status, response);
  }

  private static ObjectSchema problemSchema() {
    ObjectSchema schema = new ObjectSchema();
    schema.description(
        "RFC 9457 problem details (a Spring ProblemDetail); 'rule' names the rule that failed");
    schema.addProperty("type", new StringSchema());
    schema.addProperty("title", new StringSchema());
    schema.addProperty("status", new IntegerSchema());
    schema.addProperty("detail", new StringSchema());
    schema.addProperty("instance", new StringSchema().format("uri-reference"));
    schema.addProperty("rule", new StringSchema());
    return schema;
  }
}
