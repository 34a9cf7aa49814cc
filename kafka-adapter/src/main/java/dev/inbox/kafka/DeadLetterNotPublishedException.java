package dev.inbox.kafka;

import dev.inbox.InboxException;

/**
 * A record that had to be dead-lettered could not be: its dead letter was not acknowledged. The
 * record is therefore not settled, its offset must not be committed, and it is read again (the
 * inbox recognises the records before it that took effect as duplicates). Fix the cause (the
 * dead-letter topic's name or ACLs, the producer's settings) and the record goes through.
 */
public final class DeadLetterNotPublishedException extends InboxException {
  private static final long serialVersionUID = 1L;
  private final String topic;
  private final int partition;
  private final long offset;

  DeadLetterNotPublishedException(DeadLetter<?, ?> deadLetter, String scope, Throwable cause) {
    super(
        scope,
        deadLetter.disposition().key(),
        "the dead letter of "
            + deadLetter.record().topic()
            + "-"
            + deadLetter.record().partition()
            + "@"
            + deadLetter.record().offset()
            + (deadLetter.disposition().key() == null
                ? ""
                : " (key '" + deadLetter.disposition().key() + "')")
            + ", reason "
            + deadLetter.disposition().reason().code()
            + ", could not be published ("
            + cause
            + "); the record is not committed",
        cause);
    this.topic = deadLetter.record().topic();
    this.partition = deadLetter.record().partition();
    this.offset = deadLetter.record().offset();
  }

  /** The record's topic. */
  public String topic() {
    return topic;
  }

  /** The record's partition. */
  public int partition() {
    return partition;
  }

  /** The record's offset. */
  public long offset() {
    return offset;
  }
}
