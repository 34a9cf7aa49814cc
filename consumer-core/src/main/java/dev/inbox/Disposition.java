package dev.inbox;

import dev.inbox.internal.HandlerError;
import dev.inbox.internal.StateMachine;
import java.util.Objects;

/**
 * What the outcome of a message means for the transport that delivered it, decided here once for
 * every adapter: {@link Action#SETTLE} it (ack it, commit its offset), {@link Action#RETRY} it
 * later (requeue it, seek back to it), or {@link Action#DEAD_LETTER} it with a {@link
 * DeadLetterReason}. An adapter maps the action to its client's calls and writes a dead letter's
 * fields into the {@link DeadLetterHeaders}; it never decides on its own.
 *
 * <pre>
 * the message                                        action       reason
 * COMPLETED, DUPLICATE                               SETTLE
 * MISMATCH                                           DEAD_LETTER  mismatch
 * GAVE_UP                                            DEAD_LETTER  gave_up
 * FAILED, the handler threw NonRetryableException    DEAD_LETTER  non_retryable
 * FAILED, attempts at maxAttempts or past it         DEAD_LETTER  gave_up
 * FAILED, attempts below maxAttempts                 RETRY
 * IN_PROGRESS, NOT_ATTEMPTED                         RETRY
 * no usable key: invalidKey(...)                     DEAD_LETTER  invalid_key
 * not deserializable: undeserializable(...)          DEAD_LETTER  undeserializable
 * </pre>
 */
public final class Disposition {

  /** What the transport does with the message. */
  public enum Action {
    /** Its effect is committed, or it never needs one: acknowledge it, commit its offset. */
    SETTLE,
    /** Deliver it again later; nothing of it was committed. */
    RETRY,
    /** It can never take effect: publish it to the dead letter, then acknowledge it. */
    DEAD_LETTER
  }

  private final Action action;
  private final DeadLetterReason reason;
  private final String key;
  private final int attempts;
  private final Throwable failure;
  private final String detail;

  private Disposition(
      Action action,
      DeadLetterReason reason,
      String key,
      int attempts,
      Throwable failure,
      String detail) {
    this.action = action;
    this.reason = reason;
    this.key = key;
    this.attempts = attempts;
    this.failure = failure;
    this.detail = detail;
  }

  /** The disposition of a batch item, by the table above. */
  public static Disposition of(ItemResult<?> result, int maxAttempts) {
    return of(result, maxAttempts, 0);
  }

  /**
   * The disposition of a batch item, by the table above, counting its attempts as the higher of the
   * inbox's count and the transport's.
   *
   * @param maxAttempts the attempts after which a failing message is dead-lettered
   * @param transportAttempts the deliveries the transport counted, this one included (a RabbitMQ
   *     quorum queue's {@code x-delivery-count} plus one), or 0 when it counts none
   */
  public static Disposition of(ItemResult<?> result, int maxAttempts, int transportAttempts) {
    Objects.requireNonNull(result, "result");
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, but was " + maxAttempts);
    }
    String key = result.key();
    int attempts = Math.max(result.attempts(), transportAttempts);
    Throwable failure = HandlerError.unwrap(result.failure());
    return switch (result.status()) {
      case COMPLETED, DUPLICATE -> new Disposition(Action.SETTLE, null, key, attempts, null, null);
      case MISMATCH ->
          deadLetter(
              DeadLetterReason.MISMATCH,
              key,
              attempts,
              null,
              "the key was used before with a different payload");
      case GAVE_UP ->
          deadLetter(DeadLetterReason.GAVE_UP, key, attempts, failure, gaveUp(attempts));
      case FAILED -> {
        NonRetryableException nonRetryable = nonRetryable(failure);
        if (nonRetryable != null) {
          yield deadLetter(
              DeadLetterReason.NON_RETRYABLE, key, attempts, failure, describe(nonRetryable));
        }
        if (StateMachine.gaveUp(attempts, maxAttempts)) {
          yield deadLetter(DeadLetterReason.GAVE_UP, key, attempts, failure, gaveUp(attempts));
        }
        yield new Disposition(Action.RETRY, null, key, attempts, failure, describe(failure));
      }
      case IN_PROGRESS ->
          new Disposition(
              Action.RETRY,
              null,
              key,
              attempts,
              null,
              "another owner holds a live claim on the key");
      case NOT_ATTEMPTED ->
          new Disposition(
              Action.RETRY, null, key, attempts, null, "not run: an earlier message came first");
    };
  }

  /**
   * A message without a usable key: none was found, or it breaks a rule of {@link InboxKeys}.
   *
   * @param problem what is wrong, in a sentence naming where the transport looks for the key
   */
  public static Disposition invalidKey(String problem) {
    return deadLetter(DeadLetterReason.INVALID_KEY, null, 0, null, problem);
  }

  /** A message whose key could not be found because the key extractor threw. */
  public static Disposition invalidKey(Throwable extractorFailure) {
    return deadLetter(
        DeadLetterReason.INVALID_KEY,
        null,
        0,
        extractorFailure,
        "the key extractor failed: " + describe(extractorFailure));
  }

  /**
   * A message the adapter could not deserialize.
   *
   * @param problem what could not be deserialized, in a sentence
   * @param deserializerFailure what the deserializer threw, an {@link Error} included
   */
  public static Disposition undeserializable(String problem, Throwable deserializerFailure) {
    return deadLetter(DeadLetterReason.UNDESERIALIZABLE, null, 0, deserializerFailure, problem);
  }

  /** A message whose effect committed outside the inbox (processed without deduplication). */
  public static Disposition settled() {
    return new Disposition(Action.SETTLE, null, null, 0, null, null);
  }

  /**
   * A message whose processing outside the inbox failed and rolled back: retried, unless the
   * failure is (or was caused by) a {@link NonRetryableException}, which dead-letters it at once.
   */
  public static Disposition retry(Throwable failure) {
    NonRetryableException nonRetryable = nonRetryable(failure);
    if (nonRetryable != null) {
      return deadLetter(DeadLetterReason.NON_RETRYABLE, null, 0, failure, describe(nonRetryable));
    }
    return new Disposition(Action.RETRY, null, null, 0, failure, describe(failure));
  }

  /** The NonRetryableException in the failure's cause chain, or null. */
  private static NonRetryableException nonRetryable(Throwable failure) {
    Throwable cause = HandlerError.unwrap(failure);
    for (int depth = 0; cause != null && depth < 32; depth++) {
      if (cause instanceof NonRetryableException nonRetryable) {
        return nonRetryable;
      }
      cause = cause.getCause();
    }
    return null;
  }

  private static Disposition deadLetter(
      DeadLetterReason reason, String key, int attempts, Throwable failure, String detail) {
    return new Disposition(Action.DEAD_LETTER, reason, key, attempts, failure, detail);
  }

  private static String gaveUp(int attempts) {
    return "the handler failed " + attempts + " times";
  }

  private static String describe(Throwable failure) {
    if (failure == null) {
      return null;
    }
    return failure.getMessage() == null ? failure.getClass().getName() : failure.getMessage();
  }

  public Action action() {
    return action;
  }

  /** Why the message is dead-lettered; null unless the action is {@link Action#DEAD_LETTER}. */
  public DeadLetterReason reason() {
    return reason;
  }

  /** The message's idempotency key, or null when none could be found. */
  public String key() {
    return key;
  }

  /** The attempts counted for the key (0 when the message never reached the handler). */
  public int attempts() {
    return attempts;
  }

  /**
   * The last exception: the handler's own (an {@link Error} included), the key extractor's or the
   * deserializer's; null when there was none.
   */
  public Throwable failure() {
    return failure;
  }

  /**
   * What happened, in a sentence: for a dead letter, "the handler failed 3 times", the invalid
   * key's problem, or a {@link NonRetryableException}'s message; null for a settled message.
   */
  public String detail() {
    return detail;
  }

  @Override
  public String toString() {
    return action
        + (reason == null ? "" : " " + reason.code())
        + (key == null ? "" : " key '" + key + "'")
        + " after "
        + attempts
        + " attempts"
        + (detail == null ? "" : ": " + detail);
  }
}
