package dev.inbox.internal;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the purge and the oldest-in-progress check periodically on one daemon thread. A failed run,
 * an {@link Error} included, is logged and the next one tried on schedule; {@link #stop()} waits
 * for a run in progress.
 */
final class Janitor {
  private static final Logger log = LoggerFactory.getLogger(Janitor.class);
  private final ScheduledExecutorService executor;

  private Janitor(ScheduledExecutorService executor) {
    this.executor = executor;
  }

  static Janitor start(String name, Duration interval, Runnable work) {
    ScheduledExecutorService executor =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "inbox-janitor-" + name);
              thread.setDaemon(true);
              return thread;
            });
    executor.scheduleWithFixedDelay(
        () -> {
          try {
            work.run();
          } catch (RuntimeException e) {
            log.warn("inbox janitor run for {} failed; retrying in {}", name, interval, e);
          } catch (Error e) {
            // A scheduled task that throws is never run again, silently: one OutOfMemoryError or a
            // listener's AssertionError would end retention for the life of the process.
            log.error(
                "inbox janitor run for {} failed with an error; retrying in {}", name, interval, e);
          }
        },
        interval.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
    return new Janitor(executor);
  }

  void stop() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(30, TimeUnit.SECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
