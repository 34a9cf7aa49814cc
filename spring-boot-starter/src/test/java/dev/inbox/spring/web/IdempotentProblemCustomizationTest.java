package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * An application that customises its problem details (a {@code ResponseEntityExceptionHandler}
 * advice and a {@code messages.properties} wording) sees its customisation on an @Idempotent
 * endpoint's refusals too, in well-formed UTF-8; a handler that answers another status is
 * overruled, since a client decides from the status whether to retry.
 */
@Import(IdempotentProblemCustomizationTest.Customization.class)
@TestPropertySource(properties = "spring.messages.basename=inbox-problems")
class IdempotentProblemCustomizationTest extends WebTestBase {

  @TestConfiguration(proxyBeanMethods = false)
  static class Customization {
    @Bean
    PaymentProblems paymentProblems() {
      return new PaymentProblems();
    }
  }

  /** Every problem of this service names it, as many services' own advice does. */
  @RestControllerAdvice
  static class PaymentProblems extends ResponseEntityExceptionHandler {
    @Override
    protected ResponseEntity<Object> handleErrorResponseException(
        ErrorResponseException ex, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
      ex.getBody().setProperty("service", "payments-ü");
      if (ex instanceof IdempotencyProblemException problem) {
        ex.getBody().setProperty("seenRule", problem.getRule());
      }
      return super.handleErrorResponseException(ex, headers, status, request);
    }

    /** A handler that answers a refusal with another status, which the inbox must overrule. */
    @ExceptionHandler(IdempotencyProblemException.class)
    ResponseEntity<Object> idempotencyProblem(IdempotencyProblemException ex, WebRequest request) {
      if (ex.getRule().equals("idempotency-key-missing")) {
        return ResponseEntity.internalServerError().body("something went wrong");
      }
      return handleErrorResponseException(ex, new HttpHeaders(), ex.getStatusCode(), request);
    }
  }

  @Test
  void the_applications_advice_and_wording_shape_a_422_in_utf_8() throws Exception {
    String key = UUID.randomUUID().toString();
    assertThat(client.post("/pay", key, "pc-first-" + key).statusCode()).isEqualTo(201);

    HttpResponse<byte[]> response = client.postForBytes("/pay", key, "pc-second-" + key);

    assertThat(response.statusCode()).isEqualTo(422);
    assertThat(response.headers().firstValue("Content-Type"))
        .get()
        .asString()
        .startsWith("application/problem+json");
    ProblemDetail problem = problemDetail(response.body());
    assertThat(problem.getStatus()).isEqualTo(422);
    assertThat(problem.getType()).isEqualTo(URI.create("about:blank"));
    assertThat(problem.getTitle()).isEqualTo("Zahlung abgelehnt");
    assertThat(problem.getDetail())
        .isEqualTo("Der Schlüssel " + key + " gehört zu einer anderen Zahlung – 別のキーを使ってください 💳");
    assertThat(problem.getInstance()).isEqualTo(URI.create("/pay"));
    assertThat(problem.getProperties())
        .containsEntry("rule", "idempotency-key-mismatch")
        .containsEntry("seenRule", "idempotency-key-mismatch")
        .containsEntry("service", "payments-ü");
    assertEffects("pc-second-" + key, 0);
  }

  @Test
  void a_handler_that_answers_another_status_is_overruled_by_the_protocols_problem()
      throws Exception {
    String body = "pc-missing-" + UUID.randomUUID();
    HttpResponse<byte[]> response = client.postForBytes("/pay", null, body);

    ProblemDetail problem = assertProblemDetail(response, 400, "idempotency-key-missing");
    assertThat(problem.getDetail()).isEqualTo("this endpoint requires an Idempotency-Key header");
    assertThat(problem.getProperties()).doesNotContainKey("service");
    assertEffects(body, 0);
  }
}
