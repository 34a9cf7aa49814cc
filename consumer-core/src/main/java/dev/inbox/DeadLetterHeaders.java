package dev.inbox;

/**
 * The headers that every adapter adds to a dead letter, one set of names for Kafka and RabbitMQ. An
 * adapter adds its own on top, named the same way: the Kafka adapter the original topic, partition
 * and offset, the RabbitMQ adapter the original queue.
 */
public final class DeadLetterHeaders {
  private DeadLetterHeaders() {}

  /** Why: a {@link DeadLetterReason#code()}, such as {@code gave_up}. */
  public static final String REASON = "x-inbox-reason";

  /**
   * The reason in a sentence, such as "the handler failed 3 times" ({@link Disposition#detail()}).
   */
  public static final String DETAIL = "x-inbox-detail";

  /** The message's idempotency key; absent when none could be found. */
  public static final String KEY = "x-inbox-key";

  /** The handler runs counted for the key (0 when the message never reached the handler). */
  public static final String ATTEMPTS = "x-inbox-attempts";

  /**
   * The class of the last exception: the handler's, the key extractor's or the deserializer's (an
   * {@link Error} such as {@code StackOverflowError} included); absent when there was none.
   */
  public static final String EXCEPTION_CLASS = "x-inbox-exception-class";

  /** That exception's message; absent when there was no exception or it had no message. */
  public static final String EXCEPTION_MESSAGE = "x-inbox-exception-message";
}
