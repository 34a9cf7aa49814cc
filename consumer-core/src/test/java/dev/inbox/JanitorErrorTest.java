package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.spi.InboxListener;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The janitor runs on {@code scheduleWithFixedDelay} and catches only RuntimeException
 * (internal/Janitor.java:31-37). An Error thrown by one run (an OutOfMemoryError while reading, a
 * StackOverflowError, an AssertionError of an application's InboxListener) makes the executor
 * cancel every later run, silently: nothing is logged, the thread stays alive, and retention (the
 * plain table's purge, the partitioned storage's rotation and retirement) and the
 * oldest-in-progress report never run again. The Javadoc says "A failed run is logged and the next
 * one tried on schedule".
 */
class JanitorErrorTest extends InboxTestSupport {

  @Test
  void a_janitor_run_that_throws_an_error_does_not_stop_every_later_run() throws Exception {
    assumeTableStorage("retention drops generations instead of purging rows");
    AtomicInteger reports = new AtomicInteger();
    CountDownLatch firstReport = new CountDownLatch(1);
    InboxListener listener =
        new InboxListener() {
          @Override
          public void oldestInProgress(Duration age) {
            int report = reports.incrementAndGet();
            firstReport.countDown();
            if (report == 1) {
              // One run fails with an Error, as an OutOfMemoryError in a run would.
              throw new AssertionError("one janitor run fails with an Error");
            }
          }
        };
    Inbox inbox =
        inbox(
            s ->
                s.retention(Duration.ofMinutes(1))
                    .janitorInterval(Duration.ofMillis(100))
                    .listener(listener));
    assertThat(firstReport.await(10, TimeUnit.SECONDS)).as("the janitor's first run").isTrue();

    // A record past its retention, which the next runs must purge.
    inbox.execute("s", "expired", tx -> null);
    timePasses(Duration.ofMinutes(2));

    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    // A run purges, then reports: wait for both, or the purge may be seen before its run's report.
    while ((rows() > 0 || reports.get() < 2) && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(reports.get())
        .as("janitor runs that reported after the one that threw an Error (100 ms interval, 10 s)")
        .isGreaterThan(1);
    assertThat(rows()).as("records left past their retention, 10 s later").isZero();
  }

  private long rows() throws Exception {
    return queryLong("SELECT count(*) FROM " + schema + ".inbox");
  }
}
