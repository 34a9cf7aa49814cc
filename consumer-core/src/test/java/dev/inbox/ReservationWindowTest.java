package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An {@code execute} that reserves a key while the key's first {@code execute} commits must see the
 * committed record: the read that decides must come after the advisory lock was taken, or a read
 * from before the commit and a lock taken after it answer NEW for a key that is already done, and
 * the handler runs a second time (its run would then lose to the record and commit nothing, but it
 * ran).
 */
class ReservationWindowTest extends InboxTestSupport {
  private static final byte[] FINGERPRINT = Fingerprints.sha256("POST /payments {1}");
  private static final int KEYS = 300;

  @Test
  void an_execute_arriving_across_the_first_ones_commit_never_answers_new() throws Exception {
    Inbox inbox = inbox();
    StoredResult created = StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));
    AtomicInteger secondRuns = new AtomicInteger();
    AtomicInteger secondDuplicate = new AtomicInteger();
    for (int i = 0; i < KEYS; i++) {
      String key = "w-" + i;
      CountDownLatch committing = new CountDownLatch(1);
      CompletableFuture<ClaimOutcome> second;
      try (HeldKey first =
          HeldKey.reserved(
              inbox,
              "s",
              key,
              FINGERPRINT,
              tx -> {
                committing.countDown();
                return created;
              })) {
        // Sent as the first handler returns, so that its reservation races the first's commit.
        second =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    committing.await();
                    return inbox
                        .execute(
                            "s",
                            key,
                            FINGERPRINT,
                            tx -> {
                              secondRuns.incrementAndGet();
                              return created;
                            })
                        .outcome();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                  }
                });
        assertThat(first.execution().executed()).isTrue();
      }
      ClaimOutcome outcome = second.get(60, TimeUnit.SECONDS);
      assertThat(outcome).as("key %s", key).isEqualTo(ClaimOutcome.DUPLICATE);
      secondDuplicate.incrementAndGet();
    }
    assertThat(secondRuns)
        .as("second executions that answered NEW for a key already completed")
        .hasValue(0);
    assertThat(secondDuplicate).hasValue(KEYS);
  }
}
