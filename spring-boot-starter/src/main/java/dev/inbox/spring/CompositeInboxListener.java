package dev.inbox.spring;

import dev.inbox.ClaimOutcome;
import dev.inbox.spi.InboxListener;
import java.time.Duration;
import java.util.List;

/**
 * Hands every event to each of several listeners in turn (metrics and health, say), since the inbox
 * takes one. The inbox already guards its listener so that a throwing one never fails its caller.
 */
public final class CompositeInboxListener implements InboxListener {
  private final List<InboxListener> listeners;

  /** The listeners, called in this order. */
  public CompositeInboxListener(List<InboxListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public void claimed(String scope, ClaimOutcome outcome, int count) {
    listeners.forEach(l -> l.claimed(scope, outcome, count));
  }

  @Override
  public void claimLatency(String scope, Duration latency) {
    listeners.forEach(l -> l.claimLatency(scope, latency));
  }

  @Override
  public void handled(String scope, boolean succeeded, Duration latency) {
    listeners.forEach(l -> l.handled(scope, succeeded, latency));
  }

  @Override
  public void batch(String scope, int size, Duration latency) {
    listeners.forEach(l -> l.batch(scope, size, latency));
  }

  @Override
  public void leasesTakenOver(String scope, int count) {
    listeners.forEach(l -> l.leasesTakenOver(scope, count));
  }

  @Override
  public void purged(long rows, Duration latency) {
    listeners.forEach(l -> l.purged(rows, latency));
  }

  @Override
  public void oldestInProgress(Duration age) {
    listeners.forEach(l -> l.oldestInProgress(age));
  }
}
