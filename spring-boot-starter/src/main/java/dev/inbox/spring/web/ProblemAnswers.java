package dev.inbox.spring.web;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;

/**
 * Writes the endpoint's own failures as a Spring {@link ProblemDetail} through the application's
 * message converters, with the same {@code rule} member as the HTTP adapter's problem answers.
 */
final class ProblemAnswers {
  private final Supplier<List<HttpMessageConverter<?>>> converters;

  ProblemAnswers(Supplier<List<HttpMessageConverter<?>>> converters) {
    this.converters = converters;
  }

  @SuppressWarnings("unchecked")
  void send(HttpServletResponse response, HttpStatus status, String rule, String detail)
      throws IOException {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
    problem.setProperty("rule", rule);
    response.setStatus(status.value());
    for (HttpMessageConverter<?> converter : converters.get()) {
      if (converter.canWrite(ProblemDetail.class, MediaType.APPLICATION_PROBLEM_JSON)) {
        ServletServerHttpResponse out = new ServletServerHttpResponse(response);
        ((HttpMessageConverter<Object>) converter)
            .write(problem, MediaType.APPLICATION_PROBLEM_JSON, out);
        out.flush();
        return;
      }
    }
    throw new IllegalStateException(
        "no HttpMessageConverter writes application/problem+json; add Jackson to the application"
            + " (problem: "
            + rule
            + ")");
  }
}
