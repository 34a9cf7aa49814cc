package dev.inbox.spi;

import java.util.Locale;

/**
 * How a consumer settled a message (a Kafka record, a RabbitMQ delivery), as its listener reports
 * it. The same words serve every broker, so that one dashboard reads them all.
 */
public enum MessageOutcome {
  /** Its key was new: the handler ran and its transaction committed. */
  NEW,
  /** Its key was settled already: nothing ran, and the message was acknowledged. */
  DUPLICATE,
  /** The handler failed; the message is retried later. */
  FAILED,
  /**
   * It can never take effect, and its dead letter was published (or, in RabbitMQ without a
   * dead-letter exchange of the consumer's, rejected to the queue's own).
   */
  DEAD_LETTERED,
  /**
   * Its dead letter could not be published: the message stays unacknowledged and is tried again
   * after a pause, never lost.
   */
  DEAD_LETTER_FAILED;

  /** The lower-case name used as a metrics tag, such as {@code dead_lettered}. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
