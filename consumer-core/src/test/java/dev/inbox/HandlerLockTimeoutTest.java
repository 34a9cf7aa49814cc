package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The inbox bounds every lock wait of its transactions by {@code lockTimeout}, the handler's too. A
 * handler stuck behind another transaction's lock on a business table is contention, not a bad
 * message: with maxAttempts 1, counting it would give up on a valid message at once.
 */
class HandlerLockTimeoutTest extends InboxTestSupport {

  private Inbox impatientInbox() {
    return inbox(s -> s.maxAttempts(1).lockTimeout(Duration.ofMillis(300)));
  }

  /** Another transaction that holds the effects table until closed. */
  private Connection lockEffectsTable() throws Exception {
    Connection blocker = dataSource.getConnection();
    blocker.setAutoCommit(false);
    try (Statement s = blocker.createStatement()) {
      s.execute("LOCK TABLE " + schema + ".effects IN ACCESS EXCLUSIVE MODE");
    }
    return blocker;
  }

  private Execution pay(Inbox inbox, String key) {
    return inbox.execute(
        "s",
        key,
        tx -> {
          effect(tx, "s", key, 100);
          return null;
        });
  }

  @Test
  void execute_does_not_count_a_handler_lock_wait_past_the_lock_timeout() throws Exception {
    Inbox inbox = impatientInbox();
    try (Connection blocker = lockEffectsTable()) {
      assertThatThrownBy(() -> pay(inbox, "pay-1"))
          .isInstanceOf(InboxDatabaseException.class)
          .hasMessageContaining("lockTimeout (300 ms)")
          .hasMessageContaining("not counted");
      blocker.rollback();
    }
    assertThat(inbox.admin().find("s", "pay-1")).as("no failed attempt recorded").isEmpty();

    Execution retry = pay(inbox, "pay-1");
    assertThat(retry.outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(effects("pay-1")).isEqualTo(1);
  }

  @Test
  void a_batch_does_not_count_a_handler_lock_wait_past_the_lock_timeout() throws Exception {
    Inbox inbox = impatientInbox();
    List<BatchItem<Long>> items =
        List.of(BatchItem.of("a", 1L), BatchItem.of("b", 2L), BatchItem.of("c", 3L));
    BatchHandler<Long> writeEffect =
        (item, tx) -> {
          effect(tx, "s", item.key(), item.payload());
          return null;
        };
    try (Connection blocker = lockEffectsTable()) {
      assertThatThrownBy(
              () -> inbox.executeBatch("s", items, BatchFailurePolicy.CONTINUE, writeEffect))
          .isInstanceOf(InboxDatabaseException.class);
      assertThatThrownBy(
              () ->
                  inbox.executeBatch(
                      "s",
                      items,
                      BatchFailurePolicy.STOP,
                      BatchHandler.setBased((newItems, tx) -> effects(tx, "s", newItems))))
          .isInstanceOf(InboxDatabaseException.class);
      blocker.rollback();
    }
    assertThat(inboxRows()).as("no item recorded as failed").isZero();

    BatchResult<Long> retry =
        inbox.executeBatch("s", items, BatchFailurePolicy.CONTINUE, writeEffect);
    assertThat(retry.items()).extracting(ItemResult::status).containsOnly(ItemStatus.COMPLETED);
    assertThat(effects()).isEqualTo(3);
    assertThat(keysWithADoubledEffect()).isZero();
  }
}
