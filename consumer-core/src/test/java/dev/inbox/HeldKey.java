package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A key claimed by {@code execute} on another thread, its transaction held open (the row locked and
 * uncommitted) until {@link #close}, which lets it commit and checks that it ran.
 */
final class HeldKey implements AutoCloseable {
  private final CountDownLatch release = new CountDownLatch(1);
  private final ExecutorService pool = Executors.newSingleThreadExecutor();
  private final Future<Execution> holder;

  private HeldKey(Inbox inbox, String scope, String key) throws InterruptedException {
    CountDownLatch held = new CountDownLatch(1);
    holder =
        pool.submit(
            () ->
                inbox.execute(
                    scope,
                    key,
                    tx -> {
                      held.countDown();
                      release.await();
                      return null;
                    }));
    held.await();
  }

  static HeldKey hold(Inbox inbox, String scope, String key) throws InterruptedException {
    return new HeldKey(inbox, scope, key);
  }

  @Override
  public void close() throws Exception {
    release.countDown();
    try {
      assertThat(holder.get(10, TimeUnit.SECONDS).executed()).isTrue();
    } finally {
      pool.shutdown();
    }
  }
}
