package dev.inbox;

import java.time.Instant;
import java.util.Optional;

/**
 * The result of one item of a batch, in the order the items were given.
 *
 * @param item the item
 * @param status what happened to it
 * @param attempts the attempts counted for its key (0 when not attempted)
 * @param result the handler's result ({@code COMPLETED}) or the stored one ({@code DUPLICATE}), or
 *     null
 * @param failure the handler's exception ({@code FAILED}), or null
 * @param lockedUntil for {@code IN_PROGRESS}, when the other owner's lease ends, or null
 * @param <T> the payload type
 */
public record ItemResult<T>(
    BatchItem<T> item,
    ItemStatus status,
    int attempts,
    StoredResult result,
    Throwable failure,
    Instant lockedUntil) {

  public String key() {
    return item.key();
  }

  public Optional<StoredResult> storedResult() {
    return Optional.ofNullable(result);
  }
}
