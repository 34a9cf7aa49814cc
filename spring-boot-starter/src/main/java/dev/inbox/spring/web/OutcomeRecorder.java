package dev.inbox.spring.web;

import dev.inbox.http.spi.IdempotencyListener;
import dev.inbox.http.spi.RequestOutcome;
import java.time.Duration;

/**
 * Hears the outcome the filter decided for the request on the calling thread, so that the
 * endpoint's transaction commits only a request whose handler ran and whose answer was recorded;
 * the application's own listener (metrics) hears every outcome as well. The filter answers on the
 * thread that called it (it refuses asynchronous handlers), so a thread-local is enough.
 */
final class OutcomeRecorder implements IdempotencyListener {
  private final ThreadLocal<RequestOutcome> current = new ThreadLocal<>();
  private final IdempotencyListener application;

  OutcomeRecorder(IdempotencyListener application) {
    this.application = application;
  }

  /** Starts hearing the calling thread's request. */
  void start() {
    current.remove();
  }

  /** The outcome heard since {@link #start}, or null when the filter let the request through. */
  RequestOutcome finish() {
    RequestOutcome outcome = current.get();
    current.remove();
    return outcome;
  }

  @Override
  public void answered(RequestOutcome outcome, Duration addedLatency) {
    current.set(outcome);
    application.answered(outcome, addedLatency);
  }
}
