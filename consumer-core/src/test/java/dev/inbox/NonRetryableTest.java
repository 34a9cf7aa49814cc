package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The engine honours {@link NonRetryableException}: the attempt is counted and the exception is
 * carried to the caller, even when it wraps a failure that would otherwise be transient (a
 * deadlock), so that {@link Disposition} can dead-letter the message at once.
 */
class NonRetryableTest extends InboxTestSupport {

  /** What a handler throws when it gives up on a payment whose statement deadlocked. */
  private static NonRetryableException refusal() {
    return new NonRetryableException(
        "the account is closed", new SQLException("deadlock detected", "40P01"));
  }

  @Test
  void a_batch_item_that_throws_non_retryable_is_failed_counted_once_and_carries_its_exception()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    List<BatchItem<Long>> items = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      items.add(BatchItem.of("pay-" + i, (long) i));
    }
    BatchResult<Long> result =
        inbox.executeBatch(
            "s",
            items,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              if (item.key().equals("pay-4")) {
                throw refusal();
              }
              effect(tx, "s", item.key(), item.payload());
              return null;
            });

    ItemResult<Long> refused = result.items().get(4);
    assertThat(refused.status()).isEqualTo(ItemStatus.FAILED);
    assertThat(refused.attempts()).isEqualTo(1);
    assertThat(refused.failure())
        .isInstanceOf(NonRetryableException.class)
        .hasMessage("the account is closed");
    assertThat(result.count(ItemStatus.COMPLETED)).isEqualTo(9);
    assertThat(effects()).isEqualTo(9);
    assertThat(effects("pay-4")).isZero();
    assertThat(inbox.admin().find("s", "pay-4").orElseThrow().attempts()).isEqualTo(1);

    Disposition disposition = Disposition.of(refused, inbox.settings().maxAttempts());
    assertThat(disposition.action()).isEqualTo(Disposition.Action.DEAD_LETTER);
    assertThat(disposition.reason()).isEqualTo(DeadLetterReason.NON_RETRYABLE);
  }

  @Test
  void execute_counts_a_non_retryable_failure_and_throws_it_as_the_handlers_failure() {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    assertThatThrownBy(
            () ->
                inbox.execute(
                    "s",
                    "pay-1",
                    tx -> {
                      effect(tx, "s", "pay-1", 1);
                      throw refusal();
                    }))
        .isInstanceOf(HandlerFailedException.class)
        .hasCauseInstanceOf(NonRetryableException.class);
    assertThat(inbox.admin().find("s", "pay-1").orElseThrow().attempts()).isEqualTo(1);
  }

  @Test
  void a_non_retryable_exception_is_never_transient_whatever_it_wraps() {
    SQLException deadlock = new SQLException("deadlock detected", "40P01");
    assertThat(TransientFailures.isTransient(deadlock)).isTrue();
    assertThat(TransientFailures.isTransient(new RuntimeException(deadlock))).isTrue();
    assertThat(TransientFailures.isTransient(refusal())).isFalse();
    assertThat(TransientFailures.isTransient(new RuntimeException(refusal()))).isFalse();
  }
}
