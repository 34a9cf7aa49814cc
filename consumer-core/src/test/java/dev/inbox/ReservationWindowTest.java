package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A reservation polled while the key's first reservation commits must see the committed record: the
 * read that decides must come after the advisory lock was taken, or a read from before the commit
 * and a lock taken after it answer NEW for a key that is already done, and the handler runs a
 * second time.
 */
class ReservationWindowTest extends InboxTestSupport {
  private static final byte[] FINGERPRINT = Fingerprints.sha256("POST /payments {1}");
  private static final int KEYS = 300;

  @Test
  void a_reservation_polled_across_the_first_ones_commit_never_answers_new() throws Exception {
    Inbox inbox = inbox();
    StoredResult created = StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));
    AtomicInteger secondNew = new AtomicInteger();
    AtomicInteger secondDuplicate = new AtomicInteger();
    for (int i = 0; i < KEYS; i++) {
      String key = "w-" + i;
      AtomicBoolean firstDone = new AtomicBoolean();
      try (Connection first = dataSource.getConnection()) {
        first.setAutoCommit(false);
        Reservation held = inbox.reserveAtStart(first, "s", key, FINGERPRINT);
        assertThat(held.isNew()).isTrue();
        CompletableFuture<ClaimOutcome> poller =
            CompletableFuture.supplyAsync(
                () -> {
                  try (Connection second = dataSource.getConnection()) {
                    second.setAutoCommit(false);
                    while (true) {
                      boolean lastChance = firstDone.get();
                      Reservation polled = inbox.reserveAtStart(second, "s", key, FINGERPRINT);
                      second.rollback();
                      if (polled.outcome() != ClaimOutcome.IN_PROGRESS || lastChance) {
                        return polled.outcome();
                      }
                    }
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                });
        inbox.completeAndCommit(first, held, created);
        firstDone.set(true);
        ClaimOutcome outcome = poller.get(60, TimeUnit.SECONDS);
        (outcome == ClaimOutcome.NEW ? secondNew : secondDuplicate).incrementAndGet();
        assertThat(outcome).as("key %s", key).isIn(ClaimOutcome.NEW, ClaimOutcome.DUPLICATE);
      }
    }
    assertThat(secondNew)
        .as("reservations that answered NEW for a key already completed")
        .hasValue(0);
    assertThat(secondDuplicate).hasValue(KEYS);
  }
}
