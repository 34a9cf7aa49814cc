package dev.inbox.spring.web;

import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponse;
import org.springframework.web.ErrorResponseException;

/**
 * An {@link Idempotent} endpoint's refusal (400 for a missing or malformed key, 409 while the key
 * is in flight, 422 for the key with another request, and the filter's other problem answers), as a
 * Spring {@link ErrorResponse}. It is never thrown at the application: the starter hands it to the
 * application's {@code @ExceptionHandler} methods (a {@code @ControllerAdvice}, a {@code
 * ResponseEntityExceptionHandler} subclass, Boot's {@code spring.mvc.problemdetails.enabled}), as
 * if the endpoint's method had thrown it, so that they may shape its {@link ProblemDetail}; when
 * none handles it, the starter renders {@link #getBody()} through the application's message
 * converters. Either way the answer keeps this exception's status: a handler that answers another
 * one is overruled (and logged), since a client decides from the status whether to retry.
 *
 * <p>The body has {@code type} {@code about:blank}, the status's reason phrase as {@code title}, a
 * {@code detail} for people and the extension member {@code rule} for machines, such as {@code
 * idempotency-key-mismatch}. Its detail message code is {@code
 * problemDetail.dev.inbox.spring.web.IdempotencyProblemException.<rule>}, with the key as argument
 * {@code {0}} (empty when the request had no acceptable key), so that a {@code messages.properties}
 * entry rewords it.
 */
public class IdempotencyProblemException extends ErrorResponseException {
  private static final long serialVersionUID = 1L;

  private final String rule;

  IdempotencyProblemException(ProblemDetail body, String rule, String key) {
    super(
        org.springframework.http.HttpStatusCode.valueOf(body.getStatus()),
        body,
        null,
        ErrorResponse.getDefaultDetailMessageCode(IdempotencyProblemException.class, rule),
        new Object[] {key == null ? "" : key});
    this.rule = rule;
  }

  /** The rule that failed, as in the body's {@code rule} member: {@code request-in-progress}. */
  public String getRule() {
    return rule;
  }

  @Override
  public String getMessage() {
    return getStatusCode().value() + " " + rule + ": " + getBody().getDetail();
  }
}
