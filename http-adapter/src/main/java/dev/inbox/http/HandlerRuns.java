package dev.inbox.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Runs the application's handler (the rest of the filter chain) for one request, each run into a
 * response buffer of its own, so that nothing reaches the client before the filter decides. A run
 * returns what the handler threw instead of throwing it, which keeps the handler's failures apart
 * from the filter's own; the time of all runs is summed, as it is no part of the filter's latency.
 */
final class HandlerRuns {
  private final FilterChain chain;
  private final HttpServletResponse response;
  private long nanos;
  private Run last;

  HandlerRuns(FilterChain chain, HttpServletResponse response) {
    this.chain = chain;
    this.response = response;
  }

  /**
   * One run of the handler: its buffered response, and what it threw (null when it returned). The
   * failure is one a filter chain throws: an {@link IOException}, a {@link ServletException}, a
   * {@link RuntimeException} or an {@link Error}.
   */
  record Run(BufferedResponse response, Throwable failure) {}

  /**
   * @throws IOException when refusing an asynchronous handler fails to reach the client
   */
  Run run(HttpServletRequest request) throws IOException {
    BufferedResponse buffered = new BufferedResponse(response);
    Throwable failure = null;
    long start = System.nanoTime();
    try {
      chain.doFilter(request, buffered);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      failure = e;
    } finally {
      nanos += System.nanoTime() - start;
    }
    if (failure == null && request.isAsyncStarted()) {
      failure = refuseAsync(request);
    }
    last = new Run(buffered, failure);
    return last;
  }

  /** The latest run, or null before the first. */
  Run last() {
    return last;
  }

  /** How long the handler ran, over every run. */
  long nanos() {
    return nanos;
  }

  /**
   * The handler goes on in another thread, so neither its response nor its writes are known yet:
   * storing what the chain returned with would replay an empty answer forever. The client gets a
   * 500 now, and ending the async cycle keeps the late answer, whose writes are rolled back, from
   * reaching it.
   */
  private ServletException refuseAsync(HttpServletRequest request) throws IOException {
    String detail =
        "the handler started asynchronous processing (startAsync), which IdempotencyFilter does"
            + " not support: the response must be complete when the filter chain returns;"
            + " nothing was recorded or committed";
    Problems.send(response, 500, "async-not-supported", detail);
    request.getAsyncContext().complete();
    return new ServletException(detail);
  }
}
