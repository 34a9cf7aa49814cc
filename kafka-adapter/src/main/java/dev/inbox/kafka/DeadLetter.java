package dev.inbox.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A record the adapter gave up on.
 *
 * @param record the original record
 * @param reason why
 * @param key its idempotency key, or null when none could be found
 * @param failure the last exception, or null (for example for {@link DeadLetterReason#MISMATCH})
 * @param attempts the handler runs counted for its key
 */
public record DeadLetter<K, V>(
    ConsumerRecord<K, V> record,
    DeadLetterReason reason,
    String key,
    Throwable failure,
    int attempts) {

  /** The exception's message, or a sentence for reasons without one. */
  public String description() {
    if (failure != null) {
      return failure.getMessage() == null ? failure.getClass().getName() : failure.getMessage();
    }
    return switch (reason) {
      case MISMATCH -> "the key was used before with a different payload";
      case GAVE_UP -> "the handler failed " + attempts + " times";
      default -> reason.name();
    };
  }
}
