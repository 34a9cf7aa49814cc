package dev.inbox.kafka;

import dev.inbox.Disposition;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A record the adapter gave up on.
 *
 * @param record the original record
 * @param disposition why, with its key, attempts and last exception: a {@link
 *     Disposition.Action#DEAD_LETTER}
 */
public record DeadLetter<K, V>(ConsumerRecord<K, V> record, Disposition disposition) {
  public DeadLetter {
    Objects.requireNonNull(record, "record");
    if (disposition.action() != Disposition.Action.DEAD_LETTER) {
      throw new IllegalArgumentException(
          "a dead letter needs a DEAD_LETTER disposition, but was " + disposition);
    }
  }
}
