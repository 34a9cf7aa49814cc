package dev.inbox.http;

import dev.inbox.http.spi.RequestOutcome;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * How the filter answers one request it decided on: the outcome its listener gets, and what the
 * client gets (or, for a handler's own failure, what goes on to the container). The outcome is
 * decided before anything is sent, so that the listener hears of each request once, even when
 * sending fails.
 */
record Answer(RequestOutcome outcome, Sending sending) {

  /** Writes the answer to the client, or throws what the container is to handle. */
  @FunctionalInterface
  interface Sending {
    void to(HttpServletResponse response) throws IOException, ServletException;
  }

  /** The handler's buffered response, sent as it is. */
  static Answer buffered(RequestOutcome outcome, BufferedResponse buffered) {
    return new Answer(outcome, buffered::writeTo);
  }

  void sendTo(HttpServletResponse response) throws IOException, ServletException {
    sending.to(response);
  }
}
