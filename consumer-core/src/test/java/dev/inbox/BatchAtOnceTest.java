package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@linkplain BatchHandler#setBased set-based} handler: one call for all new items, and when it
 * throws, one call per item to find and fail only the poison one.
 */
class BatchAtOnceTest extends InboxTestSupport {
  /** The keys of each handler call, in order; the test instance is shared, so it is reset. */
  private final List<List<String>> calls = new ArrayList<>();

  @BeforeEach
  void noCallsYet() {
    calls.clear();
  }

  private static List<BatchItem<Long>> items(String... keys) {
    List<BatchItem<Long>> items = new ArrayList<>();
    for (String key : keys) {
      items.add(BatchItem.of(key, 10L));
    }
    return items;
  }

  /** Records each call's keys, fails any call holding "poison", and writes set-based otherwise. */
  private BatchHandler.SetBased<Long> handler() {
    return (newItems, tx) -> {
      calls.add(newItems.stream().map(BatchItem::key).toList());
      if (newItems.stream().anyMatch(item -> item.key().equals("poison"))) {
        // Written first, so that the test sees the rollback undo it.
        effects(tx, "s", newItems);
        throw new IllegalArgumentException("poison payment");
      }
      effects(tx, "s", newItems);
    };
  }

  @Test
  void one_call_gets_the_new_items_in_batch_order_each_key_once() throws Exception {
    Inbox inbox = inbox();
    inbox.executeBatch(
        "s",
        items("old-1", "old-2"),
        BatchFailurePolicy.CONTINUE,
        BatchHandler.setBased(handler()));
    calls.clear();

    BatchResult<Long> result =
        inbox.executeBatch(
            "s",
            items("a", "old-1", "b", "a", "c", "old-2"),
            BatchFailurePolicy.CONTINUE,
            BatchHandler.setBased(handler()));

    assertThat(calls).containsExactly(List.of("a", "b", "c"));
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(
            ItemStatus.COMPLETED,
            ItemStatus.DUPLICATE,
            ItemStatus.COMPLETED,
            ItemStatus.DUPLICATE,
            ItemStatus.COMPLETED,
            ItemStatus.DUPLICATE);
    assertThat(effects()).as("old-1, old-2, a, b, c").isEqualTo(5);
    assertThat(keysWithADoubledEffect()).isZero();
    assertThat(inbox.admin().find("s", "b").orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void a_batch_of_re_sends_only_never_calls_the_handler() throws Exception {
    Inbox inbox = inbox();
    inbox.executeBatch(
        "s", items("x", "y"), BatchFailurePolicy.CONTINUE, BatchHandler.setBased(handler()));
    calls.clear();

    BatchResult<Long> result =
        inbox.executeBatch(
            "s", items("y", "x"), BatchFailurePolicy.CONTINUE, BatchHandler.setBased(handler()));

    assertThat(calls).isEmpty();
    assertThat(result.count(ItemStatus.DUPLICATE)).isEqualTo(2);
    assertThat(effects()).isEqualTo(2);
  }

  @Test
  void a_poison_item_fails_alone_and_the_others_commit_under_continue() throws Exception {
    Inbox inbox = inbox();

    BatchResult<Long> result =
        inbox.executeBatch(
            "s",
            items("a", "poison", "b"),
            BatchFailurePolicy.CONTINUE,
            BatchHandler.setBased(handler()));

    assertThat(calls)
        .containsExactly(
            List.of("a", "poison", "b"), List.of("a"), List.of("poison"), List.of("b"));
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.COMPLETED);
    assertThat(result.items().get(1).failure()).hasMessage("poison payment");
    assertThat(effects("a")).isEqualTo(1);
    assertThat(effects("b")).isEqualTo(1);
    assertThat(effects("poison")).as("rolled back to its savepoint").isZero();
    InboxRecord poison = inbox.admin().find("s", "poison").orElseThrow();
    assertThat(poison.state()).isEqualTo(RecordState.FAILED);
    assertThat(poison.attempts()).isEqualTo(1);
  }

  @Test
  void under_stop_the_items_after_the_poison_are_left_untouched() throws Exception {
    Inbox inbox = inbox();

    BatchResult<Long> result =
        inbox.executeBatch(
            "s",
            items("a", "b", "poison", "c", "d"),
            BatchFailurePolicy.STOP,
            BatchHandler.setBased(handler()));

    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(
            ItemStatus.COMPLETED,
            ItemStatus.COMPLETED,
            ItemStatus.FAILED,
            ItemStatus.NOT_ATTEMPTED,
            ItemStatus.NOT_ATTEMPTED);
    assertThat(effects()).as("a and b only").isEqualTo(2);
    assertThat(effects("c") + effects("d")).isZero();
    assertThat(inbox.admin().find("s", "c")).isEmpty();
    assertThat(inbox.admin().find("s", "poison").orElseThrow().state())
        .isEqualTo(RecordState.FAILED);
  }
}
