package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.testing.HalfSentParameter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A handler whose JDBC parameter stream throws in the middle of a statement leaves pgjdbc's Bind
 * message half-sent, and the server waits for the rest of it while a rollback on that connection
 * waits for an answer. The inbox's rollback after a handler failure is bounded: the connection is
 * aborted (and so evicted from the pool), the item's attempt counted, and the batch's other items
 * committed.
 */
class HalfSentStatementTest extends InboxTestSupport {
  /** Far beyond the inbox's bound on a rollback, so that a hang fails the test, not the build. */
  private static final Duration HANG = Duration.ofSeconds(120);

  private static final Supplier<Throwable> STORE_GONE =
      () -> new UncheckedIOException(new IOException("the document store went away"));

  private static final Supplier<Throwable> OUT_OF_MEMORY =
      () -> new OutOfMemoryError("Java heap space (simulated)");

  private final ExecutorService calls =
      Executors.newCachedThreadPool(
          r -> {
            Thread thread = new Thread(r, "half-sent-call");
            thread.setDaemon(true);
            return thread;
          });

  @AfterAll
  void stopCalls() {
    calls.shutdownNow();
  }

  private BatchHandler<Long> effectUnlessBlob(Supplier<? extends Throwable> failure) {
    return (item, tx) -> {
      if (item.key().equals("blob")) {
        HalfSentParameter.send(tx, failure);
      }
      effect(tx, "s", item.key(), item.payload());
      return null;
    };
  }

  private static List<BatchItem<Long>> okBlobOk() {
    return List.of(BatchItem.of("ok-1", 1L), BatchItem.of("blob", 7L), BatchItem.of("ok-2", 2L));
  }

  /** The call's outcome, or a failure naming the hang instead of a build that never ends. */
  private <V> V within(Callable<V> call) throws Exception {
    Future<V> future = calls.submit(call);
    try {
      return future.get(HANG.toSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the call still hung after " + HANG, e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw (Error) e.getCause();
    }
  }

  private List<ItemStatus> batch(
      Inbox inbox, List<BatchItem<Long>> items, BatchFailurePolicy policy, BatchHandler<Long> h)
      throws Exception {
    return within(() -> inbox.executeBatch("s", items, policy, h)).items().stream()
        .map(ItemResult::status)
        .toList();
  }

  private void assertNoConnectionHeld() {
    assertThat(dataSource.getHikariPoolMXBean().getActiveConnections())
        .as("connections still held by the inbox")
        .isZero();
  }

  /** ok-1 and ok-2 committed, blob's one attempt counted, and no connection left held. */
  private void assertOnlyBlobFailed(Inbox inbox, BatchResult<Long> result) throws Exception {
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.COMPLETED);
    assertThat(result.items().get(1).failure()).isInstanceOf(UncheckedIOException.class);
    assertThat(effects()).as("effects of ok-1 and ok-2").isEqualTo(2);
    assertThat(effects("blob")).isZero();
    InboxRecord blob = inbox.admin().find("s", "blob").orElseThrow();
    assertThat(blob.state()).isEqualTo(RecordState.FAILED);
    assertThat(blob.attempts()).isEqualTo(1);
    assertNoConnectionHeld();
  }

  @Test
  void a_batch_counts_the_half_sent_item_as_failed_and_commits_the_others() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        within(
            () ->
                inbox.executeBatch(
                    "s", okBlobOk(), BatchFailurePolicy.CONTINUE, effectUnlessBlob(STORE_GONE)));

    assertOnlyBlobFailed(inbox, result);
  }

  @Test
  void under_stop_the_items_after_the_half_sent_one_are_left_for_later() throws Exception {
    Inbox inbox = inbox();
    assertThat(batch(inbox, okBlobOk(), BatchFailurePolicy.STOP, effectUnlessBlob(STORE_GONE)))
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.NOT_ATTEMPTED);
    assertThat(effects()).as("effect of ok-1").isEqualTo(1);
    assertThat(inbox.admin().find("s", "blob").orElseThrow().attempts()).isEqualTo(1);
    assertThat(inbox.admin().find("s", "ok-2")).isEmpty();
    assertNoConnectionHeld();
  }

  @Test
  void a_set_based_batch_finds_the_half_sent_item_and_commits_the_others() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        within(
            () ->
                inbox.executeBatch(
                    "s",
                    okBlobOk(),
                    BatchFailurePolicy.CONTINUE,
                    BatchHandler.setBased(
                        (items, tx) -> {
                          if (items.stream().anyMatch(item -> item.key().equals("blob"))) {
                            HalfSentParameter.send(tx, STORE_GONE);
                          }
                          effects(tx, "s", items);
                        })));

    assertOnlyBlobFailed(inbox, result);
  }

  @Test
  void a_handler_error_the_caller_wraps_is_a_failed_attempt_until_the_item_gives_up()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    // What the consumers do with an Error from a handler: wrap it, so that it is a failed attempt.
    BatchHandler<Long> wrapping =
        (item, tx) -> {
          try {
            return effectUnlessBlob(OUT_OF_MEMORY).handle(item, tx);
          } catch (OutOfMemoryError e) {
            throw new IllegalStateException("the handler failed", e);
          }
        };
    List<BatchItem<Long>> blob = List.of(BatchItem.of("blob", 7L));
    for (int attempt = 1; attempt <= 2; attempt++) {
      assertThat(batch(inbox, blob, BatchFailurePolicy.STOP, wrapping))
          .containsExactly(ItemStatus.FAILED);
      assertThat(inbox.admin().find("s", "blob").orElseThrow().attempts()).isEqualTo(attempt);
    }
    assertThat(batch(inbox, okBlobOk(), BatchFailurePolicy.STOP, wrapping))
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.GAVE_UP, ItemStatus.COMPLETED);
    assertThat(effects()).as("effects of ok-1 and ok-2").isEqualTo(2);
    assertNoConnectionHeld();
  }

  @Test
  void an_error_past_the_handler_is_thrown_on_and_the_connection_discarded() throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                batch(
                    inbox,
                    okBlobOk(),
                    BatchFailurePolicy.CONTINUE,
                    effectUnlessBlob(OUT_OF_MEMORY)))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(effects()).as("the batch was rolled back").isZero();
    assertThat(inboxRows()).isZero();
    assertNoConnectionHeld();

    assertThat(
            batch(
                inbox,
                List.of(BatchItem.of("ok-1", 1L)),
                BatchFailurePolicy.CONTINUE,
                effectUnlessBlob(STORE_GONE)))
        .as("the next batch, on a sound connection")
        .containsExactly(ItemStatus.COMPLETED);
  }

  @Test
  void execute_counts_the_half_sent_attempt_until_the_key_gives_up() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    for (int attempt = 1; attempt <= 2; attempt++) {
      assertThatThrownBy(
              () ->
                  within(
                      () ->
                          inbox.execute(
                              "s",
                              "blob",
                              tx -> {
                                HalfSentParameter.send(tx, STORE_GONE);
                                return null;
                              })))
          .isInstanceOf(HandlerFailedException.class);
      assertThat(inbox.admin().find("s", "blob").orElseThrow().attempts()).isEqualTo(attempt);
      assertNoConnectionHeld();
    }
    assertThat(within(() -> executeWithEffect(inbox, "s", "blob")).outcome())
        .isEqualTo(ClaimOutcome.GAVE_UP);

    assertThatThrownBy(
            () ->
                within(
                    () ->
                        inbox.execute(
                            "s",
                            "error",
                            tx -> {
                              HalfSentParameter.sendRunningOutOfMemory(tx);
                              return null;
                            })))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(inbox.admin().find("s", "error")).isEmpty();
    assertNoConnectionHeld();
    assertThat(within(() -> executeWithEffect(inbox, "s", "after")).outcome())
        .isEqualTo(ClaimOutcome.NEW);
    assertThat(effects()).isEqualTo(1);
  }
}
