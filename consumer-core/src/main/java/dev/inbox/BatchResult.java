package dev.inbox;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The results of a batch, one per item and in the same order.
 *
 * @param items the per-item results
 * @param <T> the payload type
 */
public record BatchResult<T>(List<ItemResult<T>> items) {
  public BatchResult {
    items = List.copyOf(items);
  }

  /** How many items ended with the status. */
  public int count(ItemStatus status) {
    return (int) items.stream().filter(item -> item.status() == status).count();
  }

  /** The number of items per status, without zero entries. */
  public Map<ItemStatus, Integer> counts() {
    Map<ItemStatus, Integer> counts = new EnumMap<>(ItemStatus.class);
    items.forEach(item -> counts.merge(item.status(), 1, Integer::sum));
    return counts;
  }
}
