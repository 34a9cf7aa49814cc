package dev.inbox.spring;

import dev.inbox.spi.InboxListener;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The inbox's health, as the Actuator indicator reports it, from what the janitor reports each
 * round: it is alive when its last round ended less than three janitor intervals ago, and the
 * oldest {@code IN_PROGRESS} key (a lease, aged by the database's clock) must be younger than the
 * threshold. Reading it costs no query; it is as fresh as the janitor's last round.
 *
 * <p>The janitor's liveness is measured on this JVM's monotonic clock ({@code System.nanoTime}): it
 * is about this process's thread, not about time stored in the database.
 */
public final class InboxHealth implements InboxListener {
  private final Duration janitorInterval;
  private final Duration inProgressThreshold;
  private final LongSupplier nanoTime;
  private final long startedAt;
  private volatile long lastRoundAt = Long.MIN_VALUE;
  private volatile Duration oldestInProgress;

  /**
   * @param janitorInterval the inbox's janitor interval; zero when the janitor is off
   * @param inProgressThreshold the age of the oldest IN_PROGRESS key that makes the inbox DOWN
   */
  public InboxHealth(Duration janitorInterval, Duration inProgressThreshold) {
    this(janitorInterval, inProgressThreshold, System::nanoTime);
  }

  InboxHealth(Duration janitorInterval, Duration inProgressThreshold, LongSupplier nanoTime) {
    this.janitorInterval = Objects.requireNonNull(janitorInterval, "janitorInterval");
    if (inProgressThreshold.isNegative() || inProgressThreshold.isZero()) {
      throw new IllegalArgumentException(
          "inbox.health.in-progress-threshold must be positive, but was " + inProgressThreshold);
    }
    this.inProgressThreshold = inProgressThreshold;
    this.nanoTime = nanoTime;
    this.startedAt = nanoTime.getAsLong();
  }

  @Override
  public void oldestInProgress(Duration age) {
    oldestInProgress = age;
    lastRoundAt = nanoTime.getAsLong();
  }

  /** The state and what it is made of, as the indicator's details. */
  public Report report() {
    Map<String, Object> details = new LinkedHashMap<>();
    boolean up = true;
    if (janitorInterval.isZero()) {
      details.put("janitor", "disabled (inbox.janitor-interval=0)");
    } else {
      long last = lastRoundAt;
      Duration quiet =
          Duration.ofNanos(nanoTime.getAsLong() - (last == Long.MIN_VALUE ? startedAt : last));
      Duration limit = janitorInterval.multipliedBy(3);
      boolean alive = quiet.compareTo(limit) < 0;
      details.put(
          "janitor", alive ? "alive" : "no round finished for " + quiet + " (limit " + limit + ")");
      details.put("janitorInterval", janitorInterval.toString());
      up = alive;
    }
    Duration oldest = oldestInProgress;
    details.put("inProgressThreshold", inProgressThreshold.toString());
    if (oldest != null) {
      details.put("oldestInProgress", oldest.toString());
      if (oldest.compareTo(inProgressThreshold) >= 0) {
        details.put(
            "stuck",
            "a key has been IN_PROGRESS for "
                + oldest
                + "; find it with InboxAdmin and release or settle it");
        up = false;
      }
    }
    return new Report(up, Collections.unmodifiableMap(details));
  }

  /** Whether the inbox is healthy, and the details that say why. */
  public record Report(boolean up, Map<String, Object> details) {}
}
