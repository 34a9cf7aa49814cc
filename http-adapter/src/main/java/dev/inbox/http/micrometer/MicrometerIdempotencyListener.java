package dev.inbox.http.micrometer;

import dev.inbox.http.spi.IdempotencyListener;
import dev.inbox.http.spi.RequestOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/**
 * Publishes the filter's requests as Micrometer meters. Micrometer is an optional dependency: only
 * this class needs it.
 *
 * <ul>
 *   <li>{@code inbox.http.requests} (counter; tag outcome = {@link RequestOutcome#tag()}: fresh,
 *       replayed, conflict, mismatch, missing_key, invalid_key, invalid_path, no_scope, too_large,
 *       not_recorded, released, gave_up, unavailable, error)
 *   <li>{@code inbox.http.added.latency} (timer; tag outcome): the time the filter added to the
 *       request, the application's handler excluded
 * </ul>
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener {
  private final Map<RequestOutcome, Counter> requests = new EnumMap<>(RequestOutcome.class);
  private final Map<RequestOutcome, Timer> latencies = new EnumMap<>(RequestOutcome.class);

  public MicrometerIdempotencyListener(MeterRegistry registry) {
    for (RequestOutcome outcome : RequestOutcome.values()) {
      requests.put(
          outcome,
          Counter.builder("inbox.http.requests")
              .description("Requests with an Idempotency-Key, by how they were answered")
              .tag("outcome", outcome.tag())
              .register(registry));
      latencies.put(
          outcome,
          Timer.builder("inbox.http.added.latency")
              .description("Time the idempotency filter added, the handler excluded")
              .tag("outcome", outcome.tag())
              .register(registry));
    }
  }

  @Override
  public void answered(RequestOutcome outcome, Duration addedLatency) {
    requests.get(outcome).increment();
    latencies.get(outcome).record(addedLatency);
  }
}
