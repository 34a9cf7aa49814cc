package dev.inbox.testing;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Callable;

/** Waiting for a condition in a test, asking again every 100 ms. */
public final class Await {
  private Await() {}

  /**
   * Returns once the condition holds, or fails after the timeout naming what it waited for. A
   * condition that throws {@link SQLException} is asked again, since a fault test may have just
   * terminated its connection; the last one is the cause of the failure.
   */
  public static void until(String what, Duration timeout, Callable<Boolean> condition)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    SQLException lastFailure = null;
    while (true) {
      try {
        if (condition.call()) {
          return;
        }
      } catch (SQLException e) {
        lastFailure = e;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + timeout + " waiting for " + what, lastFailure);
      }
      Thread.sleep(100);
    }
  }
}
