package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One key space is shared by every channel: a payment sent over HTTP (an untagged request
 * fingerprint) and over Kafka (a message fingerprint) with the same key takes effect once, and only
 * fingerprints of one kind are compared.
 */
class FingerprintKindsTest extends InboxTestSupport {
  private static final byte[] HTTP_REQUEST = Fingerprints.sha256("POST /payments {amount:100}");

  private static byte[] message(String body) {
    return Fingerprints.ofMessage(body.getBytes(StandardCharsets.UTF_8));
  }

  private ItemStatus deliver(Inbox inbox, String key, byte[] fingerprint) {
    return deliverWithEffect(inbox, "pay", key, fingerprint);
  }

  @Test
  void a_key_recorded_over_http_is_a_duplicate_for_a_message_with_a_message_fingerprint()
      throws Exception {
    Inbox inbox = inbox();
    Execution http =
        inbox.execute(
            "pay",
            "k-1",
            HTTP_REQUEST,
            tx -> {
              effect(tx, "pay", "k-1", 100);
              return StoredResult.of(201, new byte[0]);
            });
    assertThat(http.outcome()).isEqualTo(ClaimOutcome.NEW);

    byte[] kafka = message("{\"amount\":100}");
    assertThat(deliver(inbox, "k-1", kafka)).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(inbox.admin().lookup("pay", "k-1", kafka).map(Claim::outcome))
        .contains(ClaimOutcome.DUPLICATE);
    assertThat(inbox.leases().claim("pay", "k-1", kafka).outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(inbox.claim(tx, "pay", "k-1", kafka).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      tx.rollback();
    }
    assertThat(inbox.execute("pay", "k-1", kafka, tx -> null).outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(effects("k-1")).as("effect rows of k-1").isEqualTo(1);
  }

  @Test
  void two_different_message_fingerprints_of_one_key_mismatch() throws Exception {
    Inbox inbox = inbox();
    assertThat(deliver(inbox, "k-2", message("{\"amount\":100}"))).isEqualTo(ItemStatus.COMPLETED);
    assertThat(deliver(inbox, "k-2", message("{\"amount\":999999}")))
        .isEqualTo(ItemStatus.MISMATCH);
    assertThat(deliver(inbox, "k-2", message("{\"amount\":100}"))).isEqualTo(ItemStatus.DUPLICATE);
    assertThat(effects("k-2")).as("effect rows of k-2").isEqualTo(1);
  }

  @Test
  void a_failed_attempt_is_retried_by_another_channel_and_mismatched_by_its_own_kind()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    executeFailing(inbox, "pay", "k-3", HTTP_REQUEST);
    byte[] kafka = message("{\"amount\":100}");
    assertThat(deliver(inbox, "k-3", kafka))
        .as("a message retrying a key whose HTTP attempt failed")
        .isEqualTo(ItemStatus.COMPLETED);

    BatchHandler<Long> failing =
        (item, tx) -> {
          throw new IllegalStateException("boom");
        };
    inbox.executeBatch(
        "pay", List.of(new BatchItem<>("k-4", kafka, 100L)), BatchFailurePolicy.CONTINUE, failing);
    assertThat(deliver(inbox, "k-4", message("{\"amount\":999999}")))
        .as("another message retrying a failed one")
        .isEqualTo(ItemStatus.MISMATCH);
    assertThat(effects()).as("effect rows").isEqualTo(1);
  }

  @Test
  void a_key_repeated_in_one_batch_compares_only_fingerprints_of_one_kind() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        inbox.executeBatch(
            "pay",
            List.of(
                new BatchItem<>("k-5", HTTP_REQUEST, 100L),
                new BatchItem<>("k-5", message("{\"amount\":100}"), 100L),
                new BatchItem<>("k-6", message("{\"amount\":100}"), 100L),
                new BatchItem<>("k-6", message("{\"amount\":999999}"), 100L)),
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "pay", item.key(), item.payload());
              return null;
            });
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(
            ItemStatus.COMPLETED, ItemStatus.DUPLICATE, ItemStatus.COMPLETED, ItemStatus.MISMATCH);
    assertThat(effects()).as("effect rows").isEqualTo(2);
  }
}
