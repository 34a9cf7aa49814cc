package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A handler that catches an SQL error and carries on without a savepoint leaves its transaction
 * aborted, and PostgreSQL rolls back whatever COMMIT then says. The inbox must never report such an
 * item done: it is a failed attempt, and the other items of its batch still commit.
 */
class AbortedTransactionTest extends InboxTestSupport {

  @BeforeEach
  void paymentTwoIsAlreadyBooked() throws SQLException {
    sql("CREATE TABLE " + schema + ".booked (payment_id text PRIMARY KEY)");
    sql("INSERT INTO " + schema + ".booked VALUES ('p-2')");
  }

  /** The idiom: apply the payment, book it, and take "already booked" (23505) as done. */
  private void bookSwallowingDuplicates(Connection tx, String scope, String key)
      throws SQLException {
    effect(tx, scope, key, 100);
    try (PreparedStatement ps =
        tx.prepareStatement("INSERT INTO " + schema + ".booked (payment_id) VALUES (?)")) {
      ps.setString(1, key);
      ps.executeUpdate();
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState())) {
        throw e;
      }
    }
  }

  /** A batch handler that books each payment the idiom's way. */
  private BatchHandler<Long> bookingEach() {
    return (item, tx) -> {
      bookSwallowingDuplicates(tx, "pay", item.key());
      return null;
    };
  }

  private static List<BatchItem<Long>> threePayments() {
    return payments("p-1", "p-2", "p-3");
  }

  private static List<BatchItem<Long>> payments(String... keys) {
    return Arrays.stream(keys).map(key -> BatchItem.of(key, 100L)).toList();
  }

  private RecordState state(Inbox inbox, String key) {
    return inbox.admin().find("pay", key).orElseThrow().state();
  }

  @Test
  void execute_counts_an_aborted_transaction_as_a_failed_attempt_until_it_gives_up()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    for (int attempt = 1; attempt <= 2; attempt++) {
      assertThatThrownBy(
              () ->
                  inbox.execute(
                      "pay",
                      "p-2",
                      tx -> {
                        bookSwallowingDuplicates(tx, "pay", "p-2");
                        return null;
                      }))
          .as("attempt " + attempt)
          .isInstanceOf(HandlerFailedException.class)
          .hasMessageContaining("aborted");
      assertThat(inbox.admin().find("pay", "p-2").orElseThrow().attempts()).isEqualTo(attempt);
    }
    assertThat(inbox.execute("pay", "p-2", tx -> null).outcome()).isEqualTo(ClaimOutcome.GAVE_UP);
    assertThat(effects()).as("effect rows").isZero();
    assertThat(inboxRows()).as("inbox rows").isEqualTo(1);
    assertThat(state(inbox, "p-2")).isEqualTo(RecordState.FAILED);
  }

  @Test
  void execute_with_a_result_to_store_counts_an_aborted_transaction_as_a_failed_attempt()
      throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                inbox.execute(
                    "pay",
                    "p-2",
                    tx -> {
                      bookSwallowingDuplicates(tx, "pay", "p-2");
                      return StoredResult.of(201, new byte[0]);
                    }))
        .isInstanceOf(HandlerFailedException.class);
    assertThat(effects()).as("effect rows").isZero();
    assertThat(inboxRows()).as("inbox rows").isEqualTo(1);
    assertThat(inbox.admin().find("pay", "p-2").orElseThrow().attempts()).isEqualTo(1);
  }

  @Test
  void a_batch_fails_only_the_item_whose_handler_aborted_the_transaction() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    BatchHandler<Long> handler = bookingEach();
    BatchResult<Long> first =
        inbox.executeBatch("pay", threePayments(), BatchFailurePolicy.CONTINUE, handler);
    assertThat(first.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.COMPLETED);
    assertThat(first.items().get(1).failure()).hasMessageContaining("aborted");
    assertThat(first.items().get(1).attempts()).isEqualTo(1);
    assertThat(effects()).as("effect rows: p-1 and p-3").isEqualTo(2);
    assertThat(effects("p-2")).isZero();
    assertThat(inboxRows()).as("inbox rows").isEqualTo(3);
    assertThat(state(inbox, "p-1")).isEqualTo(RecordState.COMPLETED);
    assertThat(state(inbox, "p-2")).isEqualTo(RecordState.FAILED);
    assertThat(state(inbox, "p-3")).isEqualTo(RecordState.COMPLETED);

    BatchResult<Long> second =
        inbox.executeBatch("pay", threePayments(), BatchFailurePolicy.CONTINUE, handler);
    assertThat(second.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.DUPLICATE, ItemStatus.FAILED, ItemStatus.DUPLICATE);
    BatchResult<Long> third =
        inbox.executeBatch("pay", threePayments(), BatchFailurePolicy.CONTINUE, handler);
    assertThat(third.items().get(1).status()).isEqualTo(ItemStatus.GAVE_UP);
    assertThat(effects()).as("effect rows after three deliveries").isEqualTo(2);
    assertThat(inboxRows()).isEqualTo(3);
  }

  @Test
  void a_batch_whose_last_handler_aborted_the_transaction_still_commits_the_others()
      throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        inbox.executeBatch(
            "pay", payments("p-1", "p-3", "p-2"), BatchFailurePolicy.CONTINUE, bookingEach());
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.COMPLETED, ItemStatus.FAILED);
    assertThat(effects()).as("effect rows: p-1 and p-3").isEqualTo(2);
    assertThat(inboxRows()).as("inbox rows").isEqualTo(3);
    assertThat(state(inbox, "p-2")).isEqualTo(RecordState.FAILED);
  }

  @Test
  void under_stop_the_items_after_an_aborted_one_are_left_for_later() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        inbox.executeBatch("pay", threePayments(), BatchFailurePolicy.STOP, bookingEach());
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.NOT_ATTEMPTED);
    assertThat(effects()).as("effect rows: p-1 only").isEqualTo(1);
    assertThat(effects("p-1")).isEqualTo(1);
    assertThat(inboxRows()).as("inbox rows: p-1 completed, p-2 failed").isEqualTo(2);
    assertThat(state(inbox, "p-2")).isEqualTo(RecordState.FAILED);
  }

  @Test
  void a_batch_at_once_whose_call_aborted_the_transaction_finds_the_item_one_by_one()
      throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        inbox.executeBatch(
            "pay",
            payments("p-1", "p-3", "p-2"),
            BatchFailurePolicy.CONTINUE,
            BatchHandler.setBased(
                (newItems, tx) -> {
                  for (BatchItem<Long> item : newItems) {
                    bookSwallowingDuplicates(tx, "pay", item.key());
                  }
                }));
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.COMPLETED, ItemStatus.FAILED);
    assertThat(effects()).as("effect rows: p-1 and p-3").isEqualTo(2);
    assertThat(effects("p-2")).isZero();
    assertThat(inboxRows()).as("inbox rows").isEqualTo(3);
    assertThat(state(inbox, "p-2")).isEqualTo(RecordState.FAILED);
  }

  /**
   * {@code complete} on a caller's transaction that the idiom aborted refuses, and commits nothing.
   * The completions inside {@code execute} never meet an aborted transaction: the handler's check
   * fails the attempt first, for a reserved key (attempt 1 of the first test) as for a key claimed
   * through its record (attempt 2).
   */
  @Test
  void completing_on_an_aborted_callers_transaction_throws_and_commits_nothing() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "pay", "p-2", null);
      bookSwallowingDuplicates(tx, "pay", "p-2");
      assertThatThrownBy(() -> inbox.complete(tx, claim, null))
          .isInstanceOf(InboxDatabaseException.class)
          .hasMessageContaining("aborted");
      tx.rollback();
    }
    assertThat(effects()).as("effect rows").isZero();
    assertThat(inboxRows()).as("inbox rows").isZero();
  }

  @Test
  void
      execute_on_a_callers_transaction_counts_an_aborted_handler_and_leaves_the_transaction_usable()
          throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThatThrownBy(
              () ->
                  joining(tx)
                      .execute(
                          "pay",
                          "p-2",
                          joined -> {
                            bookSwallowingDuplicates(joined, "pay", "p-2");
                            return null;
                          }))
          .isInstanceOf(HandlerFailedException.class)
          .hasMessageContaining("aborted");
      effect(tx, "pay", "unrelated", 1);
      tx.commit();
    }
    assertThat(effects()).as("effect rows: the caller's own").isEqualTo(1);
    assertThat(effects("p-2")).isZero();
    assertThat(state(inbox, "p-2")).isEqualTo(RecordState.FAILED);
    assertThat(inbox.admin().find("pay", "p-2").orElseThrow().attempts()).isEqualTo(1);
  }
}
