package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The text of a handler's failure is written to {@code last_error} (a text column) as {@code
 * String.valueOf(exception)}, unfiltered: FailureCounter.count (ps.setString(5, error)) and
 * BatchExecution.markFailed (ps.setString(1, String.valueOf(error))). PostgreSQL refuses a text
 * value with U+0000 ("invalid byte sequence for encoding UTF8: 0x00", 22021), and such a message is
 * what a handler that parses a hostile payload throws: {@code Long.parseLong} puts its input in its
 * NumberFormatException's message as it is. Then:
 *
 * <ul>
 *   <li>execute: the failed attempt is not counted (FailureCounter logs and goes on), so the poison
 *       message is NEW at every delivery and never reaches GAVE_UP, however many times it fails;
 *   <li>executeBatch: the careful pass's markFailed aborts the pass, and the whole batch fails with
 *       an InboxDatabaseException, the good items with it, at every delivery: a Kafka partition
 *       (STOP) or a RabbitMQ batch (requeued whole) is stuck for good behind one message.
 * </ul>
 */
class FailureTextNulTest extends InboxTestSupport {
  /** A payment amount as a hostile producer sends it: a NUL inside the digits. */
  private static final String AMOUNT = "12\u00003";

  @Test
  void a_poison_message_whose_failure_text_has_a_nul_still_gives_up_after_max_attempts() {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    AtomicInteger runs = new AtomicInteger();
    for (int delivery = 1; delivery <= 5; delivery++) {
      try {
        inbox.execute(
            "payments",
            "poison-1",
            tx -> {
              runs.incrementAndGet();
              Long.parseLong(AMOUNT); // NumberFormatException: For input string: "12\u00003"
              return null;
            });
      } catch (HandlerFailedException expected) {
        // each failed attempt; the inbox should count it
      }
    }
    assertThat(runs.get())
        .as("handler runs of a poison message delivered 5 times with maxAttempts 3")
        .isEqualTo(3);
    assertThat(inbox.admin().find("payments", "poison-1"))
        .as("the poison key's record after 5 failed deliveries")
        .hasValueSatisfying(
            record ->
                assertThat(record.lastError())
                    .as("its last error, the NUL written out")
                    .contains("12\\u00003"));
  }

  @Test
  void a_batch_item_whose_failure_text_has_a_nul_fails_alone() {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    List<BatchItem<String>> items =
        List.of(BatchItem.of("good-1", "100"), BatchItem.of("poison-2", AMOUNT));
    BatchResult<String> result;
    try {
      result =
          inbox.executeBatch(
              "payments",
              items,
              BatchFailurePolicy.CONTINUE,
              (item, tx) -> {
                effect(tx, "payments", item.key(), Long.parseLong(item.payload()));
                return null;
              });
    } catch (InboxDatabaseException e) {
      throw new AssertionError(
          "the batch failed as a whole, its good item with it: " + e + " / cause " + e.getCause(),
          e);
    }
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED);
  }

  /** The same batch without the NUL: passing evidence that only the failure's text differs. */
  @Test
  void control_the_same_batch_with_a_plain_bad_amount_fails_the_item_alone() {
    Inbox inbox = inbox(s -> s.maxAttempts(3));
    BatchResult<String> result =
        inbox.executeBatch(
            "payments",
            List.of(BatchItem.of("good-3", "100"), BatchItem.of("poison-4", "12x3")),
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "payments", item.key(), Long.parseLong(item.payload()));
              return null;
            });
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED);
    assertThatThrownBy(() -> Long.parseLong(AMOUNT)).hasMessageContaining("\u0000");
  }
}
