package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
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
 * A handler whose JDBC parameter stream throws in the middle of a statement: pgjdbc pads the rest
 * of the parameter only for an IOException, so anything else leaves its Bind message half-sent, and
 * the server waits for the rest of it while a rollback on that connection waits for an answer. The
 * inbox's rollback after a handler failure is bounded: the connection is aborted (and so evicted
 * from the pool), the item's attempt counted, and the batch's other items committed.
 */
class HalfSentStatementTest extends InboxTestSupport {
  /** Far beyond the inbox's bound on a rollback, so that a hang fails the test, not the build. */
  private static final Duration HANG = Duration.ofSeconds(120);

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

  /** A document of 1 000 000 bytes whose reading fails after 100 000 of them. */
  private static InputStream documentFailingWith(Supplier<? extends Throwable> failure) {
    return new InputStream() {
      private int given;

      @Override
      public int read() {
        if (given++ >= 100_000) {
          Throwable t = failure.get();
          if (t instanceof Error error) {
            throw error;
          }
          throw (RuntimeException) t;
        }
        return 'x';
      }

      @Override
      public int read(byte[] b, int off, int len) {
        for (int n = 0; n < len; n++) {
          b[off + n] = (byte) read();
        }
        return len;
      }
    };
  }

  private static Supplier<Throwable> storeGone() {
    return () -> new UncheckedIOException(new IOException("the document store went away"));
  }

  /** Sends the document as a statement's parameter, which fails half-way through the send. */
  private static void sendDocument(Connection tx, Supplier<? extends Throwable> failure)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement("SELECT octet_length(?)")) {
      ps.setBinaryStream(1, documentFailingWith(failure), 1_000_000);
      ps.executeQuery();
    }
  }

  private BatchHandler<Long> effectUnlessBlob(Supplier<? extends Throwable> failure) {
    return (item, tx) -> {
      if (item.key().equals("blob")) {
        sendDocument(tx, failure);
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

  private void assertNoConnectionHeld() {
    assertThat(dataSource.getHikariPoolMXBean().getActiveConnections())
        .as("connections still held by the inbox")
        .isZero();
  }

  private List<ItemStatus> statuses(BatchResult<Long> result) {
    return result.items().stream().map(ItemResult::status).toList();
  }

  @Test
  void a_batch_counts_the_half_sent_item_as_failed_and_commits_the_others() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        within(
            () ->
                inbox.executeBatch(
                    "s", okBlobOk(), BatchFailurePolicy.CONTINUE, effectUnlessBlob(storeGone())));

    assertThat(statuses(result))
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.COMPLETED);
    assertThat(result.items().get(1).failure()).isInstanceOf(UncheckedIOException.class);
    assertThat(effects()).as("effects of ok-1 and ok-2").isEqualTo(2);
    assertThat(effects("blob")).isZero();
    InboxRecord blob = inbox.find("s", "blob").orElseThrow();
    assertThat(blob.state()).isEqualTo(RecordState.FAILED);
    assertThat(blob.attempts()).isEqualTo(1);
    assertNoConnectionHeld();
  }

  @Test
  void under_stop_the_items_after_the_half_sent_one_are_left_for_later() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        within(
            () ->
                inbox.executeBatch(
                    "s", okBlobOk(), BatchFailurePolicy.STOP, effectUnlessBlob(storeGone())));

    assertThat(statuses(result))
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.NOT_ATTEMPTED);
    assertThat(effects()).as("effect of ok-1").isEqualTo(1);
    assertThat(inbox.find("s", "blob").orElseThrow().attempts()).isEqualTo(1);
    assertThat(inbox.find("s", "ok-2")).isEmpty();
    assertNoConnectionHeld();
  }

  @Test
  void a_set_based_batch_finds_the_half_sent_item_and_commits_the_others() throws Exception {
    Inbox inbox = inbox();
    BatchResult<Long> result =
        within(
            () ->
                inbox.executeBatchAtOnce(
                    "s",
                    okBlobOk(),
                    BatchFailurePolicy.CONTINUE,
                    (items, tx) -> {
                      if (items.stream().anyMatch(item -> item.key().equals("blob"))) {
                        sendDocument(tx, storeGone());
                      }
                      effects(tx, "s", items);
                    }));

    assertThat(statuses(result))
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.COMPLETED);
    assertThat(effects()).as("effects of ok-1 and ok-2").isEqualTo(2);
    assertThat(inbox.find("s", "blob").orElseThrow().attempts()).isEqualTo(1);
    assertNoConnectionHeld();
  }

  @Test
  void a_handler_error_the_caller_wraps_is_a_failed_attempt_until_the_item_gives_up()
      throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    // What the consumers do with an Error from a handler: wrap it, so that it is a failed attempt.
    BatchHandler<Long> wrapping =
        (item, tx) -> {
          try {
            return effectUnlessBlob(() -> new OutOfMemoryError("Java heap space (simulated)"))
                .handle(item, tx);
          } catch (OutOfMemoryError e) {
            throw new IllegalStateException("the handler failed", e);
          }
        };
    for (int attempt = 1; attempt <= 2; attempt++) {
      BatchResult<Long> result =
          within(
              () ->
                  inbox.executeBatch(
                      "s", List.of(BatchItem.of("blob", 7L)), BatchFailurePolicy.STOP, wrapping));
      assertThat(statuses(result)).containsExactly(ItemStatus.FAILED);
      assertThat(result.items().get(0).attempts()).isEqualTo(attempt);
    }
    assertThat(
            statuses(
                within(
                    () -> inbox.executeBatch("s", okBlobOk(), BatchFailurePolicy.STOP, wrapping))))
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.GAVE_UP, ItemStatus.COMPLETED);
    assertThat(effects()).as("effects of ok-1 and ok-2").isEqualTo(2);
    assertNoConnectionHeld();
  }

  @Test
  void an_error_past_the_handler_is_thrown_on_and_the_connection_discarded() throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(
            () ->
                within(
                    () ->
                        inbox.executeBatch(
                            "s",
                            okBlobOk(),
                            BatchFailurePolicy.CONTINUE,
                            effectUnlessBlob(
                                () -> new OutOfMemoryError("Java heap space (simulated)")))))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(effects()).as("the batch was rolled back").isZero();
    assertThat(inboxRows()).isZero();
    assertNoConnectionHeld();

    assertThat(
            statuses(
                within(
                    () ->
                        inbox.executeBatch(
                            "s",
                            List.of(BatchItem.of("ok-1", 1L)),
                            effectUnlessBlob(storeGone())))))
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
                                sendDocument(tx, storeGone());
                                return null;
                              })))
          .isInstanceOf(HandlerFailedException.class);
      assertThat(inbox.find("s", "blob").orElseThrow().attempts()).isEqualTo(attempt);
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
                              sendDocument(
                                  tx, () -> new OutOfMemoryError("Java heap space (simulated)"));
                              return null;
                            })))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(inbox.find("s", "error")).isEmpty();
    assertNoConnectionHeld();
    assertThat(within(() -> executeWithEffect(inbox, "s", "after")).outcome())
        .isEqualTo(ClaimOutcome.NEW);
    assertThat(effects()).isEqualTo(1);
  }
}
