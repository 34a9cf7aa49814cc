package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** lookup answers settled keys from one read and never claims, locks or waits. */
class LookupTest extends InboxTestSupport {
  private final byte[] fingerprint = Fingerprints.sha256("POST /payments {amount:100}");

  @Test
  void a_completed_key_answers_duplicate_with_its_result_and_another_request_mismatch() {
    Inbox inbox = inbox();
    assertThat(inbox.admin().lookup("s", "k", fingerprint)).isEmpty();
    StoredResult created = StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));
    inbox.execute("s", "k", fingerprint, tx -> created);

    Claim replay = inbox.admin().lookup("s", "k", fingerprint).orElseThrow();
    assertThat(replay.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(replay.result().orElseThrow().body()).contains(created.body().orElseThrow());
    assertThat(inbox.admin().lookup("s", "k", null).orElseThrow().outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(
            inbox
                .admin()
                .lookup("s", "k", Fingerprints.sha256("POST /payments {amount:999}"))
                .orElseThrow())
        .extracting(Claim::outcome)
        .isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(inbox.admin().lookup("other-scope", "k", fingerprint)).isEmpty();
  }

  @Test
  void a_failed_key_is_claimable_until_max_attempts_then_gave_up() {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    for (int attempt = 1; attempt <= 2; attempt++) {
      assertThat(inbox.admin().lookup("s", "poison", null))
          .as("before attempt " + attempt)
          .isEmpty();
      assertThatThrownBy(
              () ->
                  inbox.execute(
                      "s",
                      "poison",
                      tx -> {
                        throw new IllegalArgumentException("cannot parse payload");
                      }))
          .isInstanceOf(HandlerFailedException.class);
    }
    assertThat(inbox.admin().lookup("s", "poison", null).orElseThrow().outcome())
        .isEqualTo(ClaimOutcome.GAVE_UP);
  }

  @Test
  void a_live_lease_is_in_progress_and_an_expired_one_is_claimable() throws Exception {
    Inbox inbox = inbox();
    assertThat(inbox.leases().claim("s", "job", null).isNew()).isTrue();
    assertThat(inbox.admin().lookup("s", "job", null).orElseThrow().outcome())
        .isEqualTo(ClaimOutcome.IN_PROGRESS);
    timePasses(Duration.ofSeconds(31));
    assertThat(inbox.admin().lookup("s", "job", null)).isEmpty();
  }

  @Test
  void a_claim_in_flight_in_another_transaction_neither_blocks_nor_shows() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(inbox.claim(tx, "s", "in-flight", null).isNew()).isTrue();
      long start = System.nanoTime();
      assertThat(inbox.admin().lookup("s", "in-flight", null)).isEmpty();
      // Well under the 5 s lock timeout: the read took no lock and waited for none.
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
      tx.rollback();
    }
  }
}
