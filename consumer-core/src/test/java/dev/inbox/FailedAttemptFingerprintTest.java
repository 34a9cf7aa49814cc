package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fingerprint of a key's first attempt sticks to the key even when that attempt failed: a retry
 * with another request is a mismatch, a retry with the same request runs again.
 */
class FailedAttemptFingerprintTest extends InboxTestSupport {
  private static final byte[] REQUEST_A = Fingerprints.sha256("POST /payments amount=100");
  private static final byte[] REQUEST_B = Fingerprints.sha256("POST /payments amount=999999");

  @Test
  void a_failed_execution_of_a_reserved_key_keeps_its_fingerprint() throws Exception {
    Inbox inbox = inbox();
    // A key with no record is reserved, and no row is written until the failure is counted.
    executeFailing(inbox, "api", "r-1", REQUEST_A);

    assertThat(inbox.execute("api", "r-1", REQUEST_B, tx -> null).outcome())
        .as("a retry with another request")
        .isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(inbox.execute("api", "r-1", REQUEST_A, tx -> null).outcome())
        .as("a retry with the same request")
        .isEqualTo(ClaimOutcome.NEW);
    assertThat(inbox.admin().find("api", "r-1").orElseThrow().fingerprint()).isEqualTo(REQUEST_A);
  }

  @Test
  void a_failed_claim_on_the_callers_transaction_keeps_its_fingerprint() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim first = inbox.claim(tx, "api", "c-1", REQUEST_A);
      assertThat(first.outcome()).isEqualTo(ClaimOutcome.NEW);
      tx.rollback();
      inbox.recordFailure(tx, first, "the handler threw");

      assertThat(inbox.claim(tx, "api", "c-1", REQUEST_B).outcome())
          .as("a retry with another request")
          .isEqualTo(ClaimOutcome.MISMATCH);
      tx.rollback();
      Claim second = inbox.claim(tx, "api", "c-1", REQUEST_A);
      assertThat(second.outcome()).as("a retry with the same request").isEqualTo(ClaimOutcome.NEW);
      assertThat(second.attempts()).isEqualTo(2);
      tx.rollback();
    }
    assertThat(inbox.admin().find("api", "c-1").orElseThrow().fingerprint()).isEqualTo(REQUEST_A);
  }

  @Test
  void a_failed_retry_claimed_through_the_record_keeps_the_first_fingerprint() throws Exception {
    Inbox inbox = inbox();
    executeFailing(inbox, "api", "c-2", REQUEST_A);
    // The key has a record now: the retry claims the row, and fails again.
    executeFailing(inbox, "api", "c-2", REQUEST_A);
    assertThat(inbox.admin().find("api", "c-2").orElseThrow().attempts()).isEqualTo(2);

    assertThat(inbox.execute("api", "c-2", REQUEST_B, tx -> null).outcome())
        .isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(inbox.admin().lookup("api", "c-2", REQUEST_B).map(Claim::outcome))
        .contains(ClaimOutcome.MISMATCH);
  }

  @Test
  void failed_executions_batch_items_and_leases_keep_their_fingerprints() throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                inbox.execute(
                    "api",
                    "e-1",
                    REQUEST_A,
                    tx -> {
                      throw new IllegalStateException("boom");
                    }))
        .isInstanceOf(HandlerFailedException.class);
    assertThat(inbox.execute("api", "e-1", REQUEST_B, tx -> null).outcome())
        .isEqualTo(ClaimOutcome.MISMATCH);

    BatchHandler<Long> failing =
        (item, tx) -> {
          throw new IllegalStateException("boom");
        };
    assertThat(
            inbox
                .executeBatch(
                    "api",
                    List.of(new BatchItem<>("b-1", REQUEST_A, 1L)),
                    BatchFailurePolicy.CONTINUE,
                    failing)
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.FAILED);
    assertThat(
            inbox
                .executeBatch(
                    "api",
                    List.of(new BatchItem<>("b-1", REQUEST_B, 1L)),
                    BatchFailurePolicy.CONTINUE,
                    (i, tx) -> null)
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.MISMATCH);

    Claim lease = inbox.leases().claim("api", "l-1", REQUEST_A);
    inbox.leases().fail(lease.leaseToken(), "provider timeout");
    assertThat(inbox.leases().claim("api", "l-1", REQUEST_B).outcome())
        .isEqualTo(ClaimOutcome.MISMATCH);
    assertThat(inbox.leases().claim("api", "l-1", REQUEST_A).outcome()).isEqualTo(ClaimOutcome.NEW);
  }
}
