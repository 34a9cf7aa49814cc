package dev.inbox;

import java.sql.Connection;
import java.util.List;
import java.util.Objects;

/**
 * The work of a batch: called for each new item, in the batch's transaction, in the batch's order.
 * Return the item's result to store (null: none). Throwing fails the item (see {@link
 * Inbox#executeBatch}); {@link TransientFailures} fail the whole batch instead.
 *
 * <p>For set-based writes, wrap a {@link SetBased} handler with {@link #setBased}: the inbox then
 * calls it once with all the new items of the batch.
 */
@FunctionalInterface
public interface BatchHandler<T> {

  StoredResult handle(BatchItem<T> item, Connection transaction) throws Exception;

  /**
   * A handler called once with every new item of the batch, so that their writes can be set-based
   * statements (one {@code INSERT ... SELECT FROM unnest(?)}, say): the batch then costs a fixed
   * number of round trips, however many new items it has. No result is stored. When it throws, the
   * failure names no item, so the batch runs again with one item per call to find the failing one:
   * the handler must be correct for any subset of the items.
   */
  static <T> BatchHandler<T> setBased(SetBased<T> handler) {
    return new SetBasedHandler<>(Objects.requireNonNull(handler, "handler"));
  }

  /** The work of all the new items of a batch at once; see {@link #setBased}. */
  @FunctionalInterface
  interface SetBased<T> {
    void handle(List<BatchItem<T>> newItems, Connection transaction) throws Exception;
  }

  /**
   * A set-based handler as a per-item one: the careful pass that finds a failing item calls it with
   * one item at a time.
   */
  record SetBasedHandler<T>(SetBased<T> handler) implements BatchHandler<T> {
    @Override
    public StoredResult handle(BatchItem<T> item, Connection transaction) throws Exception {
      handler.handle(List.of(item), transaction);
      return null;
    }
  }
}
