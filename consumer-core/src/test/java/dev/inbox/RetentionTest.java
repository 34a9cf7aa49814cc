package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetentionTest extends InboxTestSupport {

  @Test
  void purge_deletes_only_expired_completed_records() throws Exception {
    Inbox inbox = inbox(s -> s.retention(Duration.ofHours(24)).purgeBatchSize(7).maxAttempts(1));
    List<BatchItem<Integer>> old = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      old.add(BatchItem.of("old-" + i, i));
    }
    inbox.executeBatch("s", old, BatchFailurePolicy.CONTINUE, (item, tx) -> null);
    Claim leased = inbox.leases().claim("s", "leased-old", null);
    try {
      inbox.execute(
          "s",
          "failed-old",
          tx -> {
            throw new IllegalStateException("boom");
          });
    } catch (HandlerFailedException expected) {
      // counted as FAILED
    }

    timePasses(Duration.ofHours(23));
    inbox.execute("s", "young", tx -> null);
    timePasses(Duration.ofHours(2)); // old ones are 25 h old, young is 2 h old

    assertThat(inbox.admin().purgeExpired())
        .as("25 expired completed rows, in statements of 7")
        .isEqualTo(25);
    assertThat(inbox.admin().find("s", "young")).isPresent();
    assertThat(inbox.admin().find("s", "leased-old"))
        .get()
        .extracting(InboxRecord::state)
        .isEqualTo(RecordState.IN_PROGRESS);
    assertThat(inbox.admin().find("s", "failed-old"))
        .get()
        .extracting(InboxRecord::state)
        .isEqualTo(RecordState.FAILED);
    assertThat(inboxRows()).isEqualTo(3);
    assertThat(inbox.admin().purgeExpired()).isZero();

    // After purge, a key is new again: the dedup window is the retention.
    assertThat(inbox.execute("s", "old-1", tx -> null).outcome()).isEqualTo(ClaimOutcome.NEW);
    inbox.leases().complete(leased.leaseToken(), null);
  }

  @Test
  void the_janitor_purges_on_its_own_and_stops_cleanly() throws Exception {
    Inbox inbox =
        inbox(s -> s.retention(Duration.ofMinutes(1)).janitorInterval(Duration.ofMillis(100)));
    inbox.execute("s", "k", tx -> null);
    timePasses(Duration.ofMinutes(2));
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (inboxRows() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(inboxRows()).isZero();
    inbox.close();
    // close() waits for the janitor's work; its thread exits right after.
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("inbox-janitor-" + schema + ".inbox")) {
        t.join(5_000);
        assertThat(t.isAlive()).as("janitor thread after close()").isFalse();
      }
    }
  }
}
