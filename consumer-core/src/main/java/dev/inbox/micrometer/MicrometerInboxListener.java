package dev.inbox.micrometer;

import dev.inbox.ClaimOutcome;
import dev.inbox.spi.InboxListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the inbox's events as Micrometer meters under the {@code inbox.} prefix. Micrometer is
 * an optional dependency: only this class needs it.
 *
 * <ul>
 *   <li>{@code inbox.claims} (counter; tags scope, outcome)
 *   <li>{@code inbox.claim.latency} (timer; tag scope): one claim round trip, single or batch
 *   <li>{@code inbox.handler.latency} (timer; tags scope, result=success|failure)
 *   <li>{@code inbox.batch.size} (summary; tag scope) and {@code inbox.batch.latency} (timer)
 *   <li>{@code inbox.leases.taken_over} (counter; tag scope)
 *   <li>{@code inbox.purged} (counter) and {@code inbox.purge.latency} (timer)
 *   <li>{@code inbox.in_progress.oldest.age} (gauge, seconds), refreshed by the janitor
 * </ul>
 *
 * <p>Scopes become tag values: with one scope per HTTP tenant, keep the number of tenants in mind.
 */
public final class MicrometerInboxListener implements InboxListener {
  private final MeterRegistry registry;
  private final AtomicLong oldestInProgressMillis = new AtomicLong();

  public MicrometerInboxListener(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("inbox.in_progress.oldest.age", oldestInProgressMillis, v -> v.get() / 1000.0)
        .description("Age of the oldest committed IN_PROGRESS record (leased mode)")
        .baseUnit("seconds")
        .register(registry);
  }

  @Override
  public void claimed(String scope, ClaimOutcome outcome, int count) {
    Counter.builder("inbox.claims")
        .description("Keys claimed, by outcome")
        .tag("scope", scope)
        .tag("outcome", outcome.name())
        .register(registry)
        .increment(count);
  }

  @Override
  public void claimLatency(String scope, Duration latency) {
    Timer.builder("inbox.claim.latency").tag("scope", scope).register(registry).record(latency);
  }

  @Override
  public void handled(String scope, boolean succeeded, Duration latency) {
    Timer.builder("inbox.handler.latency")
        .tag("scope", scope)
        .tag("result", succeeded ? "success" : "failure")
        .register(registry)
        .record(latency);
  }

  @Override
  public void batch(String scope, int size, Duration latency) {
    DistributionSummary.builder("inbox.batch.size")
        .tag("scope", scope)
        .register(registry)
        .record(size);
    Timer.builder("inbox.batch.latency").tag("scope", scope).register(registry).record(latency);
  }

  @Override
  public void leasesTakenOver(String scope, int count) {
    Counter.builder("inbox.leases.taken_over")
        .description("Claims that took over an expired lease")
        .tag("scope", scope)
        .register(registry)
        .increment(count);
  }

  @Override
  public void purged(long rows, Duration latency) {
    Counter.builder("inbox.purged").baseUnit("rows").register(registry).increment(rows);
    Timer.builder("inbox.purge.latency").register(registry).record(latency);
  }

  @Override
  public void oldestInProgress(Duration age) {
    oldestInProgressMillis.set(age.toMillis());
  }
}
