package dev.inbox.spring.web;

import dev.inbox.http.IdempotentRequests;
import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.MessageSource;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * Answers an {@link Idempotent} endpoint's problems the Spring MVC way: each becomes an {@link
 * IdempotencyProblemException} that the application's {@code @ExceptionHandler} methods may render
 * (asked through its {@code ExceptionHandlerExceptionResolver}s, with the endpoint's handler
 * method, as the {@code DispatcherServlet} would ask them had the method thrown it); when none
 * does, its {@link ProblemDetail} is written through the application's message converters. The HTTP
 * adapter's filter writes its problems as JSON of its own, which is read back here first.
 */
final class ProblemAnswers {
  private static final Logger log = LoggerFactory.getLogger(ProblemAnswers.class);
  private static final Set<String> STANDARD_MEMBERS =
      Set.of("type", "title", "status", "detail", "instance");

  private final Supplier<List<HttpMessageConverter<?>>> converters;
  private final Supplier<List<HandlerExceptionResolver>> resolvers;
  private final MessageSource messages;

  /**
   * @param resolvers the application's resolvers that run {@code @ExceptionHandler} methods
   */
  ProblemAnswers(
      Supplier<List<HttpMessageConverter<?>>> converters,
      Supplier<List<HandlerExceptionResolver>> resolvers,
      MessageSource messages) {
    this.converters = converters;
    this.resolvers = resolvers;
    this.messages = messages;
  }

  /** Answers the endpoint's own failure (a commit that failed, say) as a problem. */
  void send(
      HttpServletRequest request,
      ContentCachingResponseWrapper held,
      HandlerMethod handler,
      HttpStatus status,
      String rule,
      String detail)
      throws IOException {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
    problem.setProperty("rule", rule);
    render(request, held, handler, new IdempotencyProblemException(problem, rule, key(request)));
  }

  /**
   * Answers again, as a {@link ProblemDetail}, the problem the filter wrote into the held response:
   * every member it wrote (its {@code rule} too) is kept; the headers it set (such as {@code
   * Retry-After}) stay on the response.
   */
  void rerender(
      HttpServletRequest request, ContentCachingResponseWrapper held, HandlerMethod handler)
      throws IOException {
    Map<String, Object> written = read(held.getContentAsByteArray());
    ProblemDetail problem = ProblemDetail.forStatus(held.getStatus());
    written.forEach(
        (member, value) -> {
          switch (member) {
            case "type" -> problem.setType(URI.create(String.valueOf(value)));
            case "title" -> problem.setTitle(String.valueOf(value));
            case "detail" -> problem.setDetail(String.valueOf(value));
            case "instance" -> problem.setInstance(URI.create(String.valueOf(value)));
            case "status" -> {
              // The response's own status, which the filter wrote alongside.
            }
            default -> problem.setProperty(member, value);
          }
        });
    Object rule = written.get("rule");
    render(
        request,
        held,
        handler,
        new IdempotencyProblemException(
            problem, rule == null ? "unknown" : rule.toString(), key(request)));
  }

  private void render(
      HttpServletRequest request,
      ContentCachingResponseWrapper held,
      HandlerMethod handler,
      IdempotencyProblemException problem)
      throws IOException {
    held.resetBuffer();
    int status = problem.getStatusCode().value();
    Object resolvedHandler = handler == null ? null : handler.createWithResolvedBean();
    for (HandlerExceptionResolver resolver : resolvers.get()) {
      ModelAndView handled = resolver.resolveException(request, held, resolvedHandler, problem);
      if (handled == null) {
        continue;
      }
      if (handled.isEmpty() && held.getStatus() == status) {
        return;
      }
      log.warn(
          "an @ExceptionHandler answered {} {} (a view: {}) to {}; the inbox answers {} instead,"
              + " since a client decides from it whether to retry",
          held.getStatus(),
          request.getRequestURI(),
          !handled.isEmpty(),
          problem.getMessage(),
          status);
      held.resetBuffer();
      break;
    }
    write(request, held, problem);
  }

  /** What Spring MVC does with a returned ProblemDetail, for a problem no handler took. */
  @SuppressWarnings("unchecked")
  private void write(
      HttpServletRequest request,
      ContentCachingResponseWrapper held,
      IdempotencyProblemException problem)
      throws IOException {
    ProblemDetail body = problem.updateAndGetBody(messages, LocaleContextHolder.getLocale());
    if (body.getInstance() == null) {
      body.setInstance(URI.create(request.getRequestURI()));
    }
    held.setStatus(problem.getStatusCode().value());
    for (HttpMessageConverter<?> converter : converters.get()) {
      if (converter.canWrite(ProblemDetail.class, MediaType.APPLICATION_PROBLEM_JSON)) {
        ServletServerHttpResponse out = new ServletServerHttpResponse(held);
        ((HttpMessageConverter<Object>) converter)
            .write(body, MediaType.APPLICATION_PROBLEM_JSON, out);
        out.flush();
        return;
      }
    }
    throw new IllegalStateException(
        "no HttpMessageConverter writes application/problem+json; add Jackson to the application"
            + " (problem: "
            + problem.getRule()
            + ")");
  }

  /** The filter's problem JSON, read by the application's JSON converter. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Map<String, Object> read(byte[] json) throws IOException {
    HttpInputMessage input =
        new HttpInputMessage() {
          @Override
          public InputStream getBody() {
            return new ByteArrayInputStream(json);
          }

          @Override
          public HttpHeaders getHeaders() {
            HttpHeaders headers = new HttpHeaders();
            headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
            return headers;
          }
        };
    for (HttpMessageConverter<?> converter : converters.get()) {
      if (converter.canRead(Map.class, MediaType.APPLICATION_PROBLEM_JSON)) {
        return (Map<String, Object>) ((HttpMessageConverter) converter).read(Map.class, input);
      }
    }
    throw new IllegalStateException(
        "no HttpMessageConverter reads application/problem+json; add Jackson to the application");
  }

  /**
   * The key the filter accepted, or empty before it accepted one. Never the raw header: a firewall
   * (Spring Security's) may refuse to hand out a value the filter has already refused.
   */
  private static String key(HttpServletRequest request) {
    return IdempotentRequests.key(request).orElse("");
  }
}
