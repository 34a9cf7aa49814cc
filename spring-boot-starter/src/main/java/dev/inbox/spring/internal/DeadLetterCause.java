package dev.inbox.spring.internal;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.DeadLetterReason;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.NonRetryableException;
import dev.inbox.spring.DeliveryRejectedException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The inbox's {@code x-inbox-*} headers of a message that Spring's recoverer dead-letters because
 * of the inbox: a {@link DeliveryRejectedException} in the failure's causes (the key gave up,
 * mismatches or is invalid) or the listener's own {@link NonRetryableException}. Any other failure
 * (the container's retries ran out first, say) gets none: the inbox is not why. Values are the
 * plain adapters' (the reason's code, the attempts the inbox counted), plus the scope.
 */
public final class DeadLetterCause {
  /** The scope the key was claimed in: the consumer group, the queue. */
  public static final String SCOPE = "x-inbox-scope";

  private final Supplier<Inbox> inbox;

  public DeadLetterCause(Supplier<Inbox> inbox) {
    this.inbox = inbox;
  }

  /**
   * The headers, in a stable order, with the attempts as an Integer; empty when the inbox is not
   * why the message is dead-lettered.
   *
   * @param scope the delivery's scope, asked only for a listener's NonRetryableException
   * @param key the delivery's key or null, asked only for a listener's NonRetryableException
   */
  public Map<String, Object> headers(
      Throwable failure, Supplier<String> scope, Supplier<String> key) {
    Map<String, Object> headers = new LinkedHashMap<>();
    DeliveryRejectedException rejected = find(failure, DeliveryRejectedException.class);
    if (rejected != null) {
      put(headers, DeadLetterHeaders.REASON, rejected.reason().code());
      put(headers, DeadLetterHeaders.DETAIL, rejected.getMessage());
      put(headers, DeadLetterHeaders.KEY, rejected.key());
      headers.put(DeadLetterHeaders.ATTEMPTS, rejected.attempts());
      put(headers, SCOPE, rejected.scope());
      return headers;
    }
    NonRetryableException nonRetryable = find(failure, NonRetryableException.class);
    if (nonRetryable == null) {
      return headers;
    }
    String scopeName = scope.get();
    String keyName = key.get();
    int attempts =
        scopeName == null || keyName == null
            ? 0
            : inbox.get().admin().find(scopeName, keyName).map(InboxRecord::attempts).orElse(0);
    put(headers, DeadLetterHeaders.REASON, DeadLetterReason.NON_RETRYABLE.code());
    put(
        headers,
        DeadLetterHeaders.DETAIL,
        nonRetryable.getMessage() == null
            ? nonRetryable.getClass().getName()
            : nonRetryable.getMessage());
    put(headers, DeadLetterHeaders.KEY, keyName);
    headers.put(DeadLetterHeaders.ATTEMPTS, attempts);
    put(headers, SCOPE, scopeName);
    put(headers, DeadLetterHeaders.EXCEPTION_CLASS, nonRetryable.getClass().getName());
    put(headers, DeadLetterHeaders.EXCEPTION_MESSAGE, nonRetryable.getMessage());
    return headers;
  }

  /** The first cause of that type, within a bounded depth (a cause chain may loop). */
  public static <T extends Throwable> T find(Throwable failure, Class<T> type) {
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < 32; depth++) {
      if (type.isInstance(cause)) {
        return type.cast(cause);
      }
      cause = cause.getCause();
    }
    return null;
  }

  private static void put(Map<String, Object> headers, String name, String value) {
    if (value != null) {
      headers.put(name, value);
    }
  }
}
