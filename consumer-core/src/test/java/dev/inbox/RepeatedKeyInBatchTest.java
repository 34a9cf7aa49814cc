package dev.inbox;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.internal.Fingerprints;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A key repeated inside one batch is decided against the key's record, or against its first
 * occurrence's claim when that one was new: never against a first occurrence that was itself a
 * mismatch. Both batch methods, both failure policies.
 */
class RepeatedKeyInBatchTest extends InboxTestSupport {
  private static final String SCOPE = "payments";

  /** How the batch's new items reach the handler. */
  enum Calls {
    ONE_BY_ONE,
    AT_ONCE
  }

  private static BatchItem<Long> payment(String key, long amount) {
    return new BatchItem<>(
        key, Fingerprints.ofMessage(String.valueOf(amount).getBytes(UTF_8)), amount);
  }

  @SafeVarargs
  private List<ItemStatus> deliver(
      Inbox inbox, Calls calls, BatchFailurePolicy policy, BatchItem<Long>... items) {
    List<BatchItem<Long>> batch = List.of(items);
    BatchResult<Long> result =
        calls == Calls.AT_ONCE
            ? inbox.executeBatch(
                SCOPE,
                batch,
                policy,
                BatchHandler.setBased((newItems, tx) -> effects(tx, SCOPE, newItems)))
            : inbox.executeBatch(
                SCOPE,
                batch,
                policy,
                (item, tx) -> {
                  effect(tx, SCOPE, item.key(), item.payload());
                  return null;
                });
    List<ItemStatus> statuses = new ArrayList<>();
    result.items().forEach(item -> statuses.add(item.status()));
    return statuses;
  }

  /** pay-1 with amount 100 fails one attempt: a FAILED record with 100's fingerprint. */
  private void firstAttemptFails(Inbox inbox) {
    BatchResult<Long> failed =
        inbox.executeBatch(
            SCOPE,
            List.of(payment("pay-1", 100)),
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              throw new IllegalStateException("gateway timeout");
            });
    assertThat(failed.items().get(0).status()).isEqualTo(ItemStatus.FAILED);
  }

  @ParameterizedTest
  @EnumSource(Calls.class)
  void a_matching_repeat_behind_a_mismatch_of_a_failed_key_is_retried_not_dead_lettered(Calls calls)
      throws Exception {
    for (BatchFailurePolicy policy : BatchFailurePolicy.values()) {
      freshSchema();
      Inbox inbox = inbox(s -> s.maxAttempts(5));
      firstAttemptFails(inbox);

      assertThat(deliver(inbox, calls, policy, payment("pay-1", 999_999), payment("pay-1", 100)))
          .as("re-send with another amount, then the original (%s)", policy)
          .containsExactly(ItemStatus.MISMATCH, ItemStatus.NOT_ATTEMPTED);
      assertThat(effects()).isZero();
      assertThat(inbox.admin().find(SCOPE, "pay-1").orElseThrow().attempts())
          .as("attempts: the original was not run, so none was counted")
          .isEqualTo(1);

      assertThat(deliver(inbox, calls, policy, payment("pay-1", 100)))
          .as("the original, read again")
          .containsExactly(ItemStatus.COMPLETED);
      assertThat(effects()).isEqualTo(1);
      assertThat(effects("pay-1")).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @EnumSource(Calls.class)
  void a_matching_repeat_behind_a_mismatch_of_a_completed_key_is_a_duplicate(Calls calls)
      throws Exception {
    Inbox inbox = inbox();
    assertThat(deliver(inbox, calls, BatchFailurePolicy.STOP, payment("pay-1", 100)))
        .containsExactly(ItemStatus.COMPLETED);

    assertThat(
            deliver(
                inbox,
                calls,
                BatchFailurePolicy.STOP,
                payment("pay-1", 999_999),
                payment("pay-1", 100),
                payment("pay-1", 999_999)))
        .containsExactly(ItemStatus.MISMATCH, ItemStatus.DUPLICATE, ItemStatus.MISMATCH);
    assertThat(effects()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Calls.class)
  void a_repeat_is_compared_with_a_new_first_occurrence(Calls calls) throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(5));
    assertThat(
            deliver(
                inbox,
                calls,
                BatchFailurePolicy.CONTINUE,
                payment("new-1", 100),
                payment("new-1", 999_999),
                payment("new-1", 100)))
        .as("a key with no record")
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.MISMATCH, ItemStatus.DUPLICATE);

    firstAttemptFails(inbox);
    assertThat(
            deliver(
                inbox,
                calls,
                BatchFailurePolicy.CONTINUE,
                payment("pay-1", 100),
                payment("pay-1", 999_999)))
        .as("a failed key retried by its first occurrence")
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.MISMATCH);
    assertThat(effects()).isEqualTo(2);
    assertThat(keysWithADoubledEffect()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Calls.class)
  void a_repeat_without_fingerprint_behind_a_mismatch_is_decided_by_the_record(Calls calls)
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(5));
    firstAttemptFails(inbox);
    deliver(inbox, calls, BatchFailurePolicy.CONTINUE, payment("done-1", 100));

    assertThat(
            deliver(
                inbox,
                calls,
                BatchFailurePolicy.CONTINUE,
                payment("pay-1", 999_999),
                BatchItem.of("pay-1", 100L),
                payment("done-1", 999_999),
                BatchItem.of("done-1", 100L)))
        .containsExactly(
            ItemStatus.MISMATCH,
            ItemStatus.NOT_ATTEMPTED,
            ItemStatus.MISMATCH,
            ItemStatus.DUPLICATE);
    assertThat(effects()).as("done-1's first delivery").isEqualTo(1);
  }
}
