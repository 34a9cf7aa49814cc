package dev.inbox.spring;

import dev.inbox.ClaimOutcome;
import dev.inbox.spi.InboxListener;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the claims of each scope and outcome, as an application's own InboxListener bean would see
 * them: a test waits for the number of claims instead of sleeping.
 */
public class ClaimCounter implements InboxListener {
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

  @Override
  public void claimed(String scope, ClaimOutcome outcome, int count) {
    counts.computeIfAbsent(scope + "/" + outcome, k -> new AtomicInteger()).addAndGet(count);
  }

  /** The claims of a scope, whatever their outcome. */
  public int total(String scope) {
    int total = 0;
    for (ClaimOutcome outcome : ClaimOutcome.values()) {
      total += count(scope, outcome);
    }
    return total;
  }

  public int count(String scope, ClaimOutcome outcome) {
    AtomicInteger count = counts.get(scope + "/" + outcome);
    return count == null ? 0 : count.get();
  }
}
