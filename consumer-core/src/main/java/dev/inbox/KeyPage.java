package dev.inbox;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One page of {@link InboxAdmin#list}, ordered by scope and key.
 *
 * @param records the records of this page
 * @param next the cursor of the next page, or null when this is the last
 * @param databaseNow the database's {@code now()} when the page was read, to judge ages and leases
 */
public record KeyPage(List<InboxRecord> records, String next, Instant databaseNow) {

  public KeyPage {
    records = List.copyOf(records);
  }

  /** The cursor to pass to {@link InboxAdmin#list} for the next page, or empty on the last. */
  public Optional<String> nextCursor() {
    return Optional.ofNullable(next);
  }
}
