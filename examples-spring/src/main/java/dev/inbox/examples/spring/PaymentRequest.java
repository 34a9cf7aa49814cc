package dev.inbox.examples.spring;

import dev.inbox.NonRetryableException;

/**
 * A payment's body on every door: {@code {"account":"acc-1","amountCents":100}}. Its id is the key
 * it arrives under (the {@code Idempotency-Key}, the {@code idempotency-key} Kafka header, the AMQP
 * {@code messageId}), never a field of the body, so that one payment cannot hide under two keys.
 *
 * @param account the account credited
 * @param amountCents the amount in cents, positive
 */
public record PaymentRequest(String account, long amountCents) {

  /**
   * The rule a payment breaks, or null. A broken payment never becomes right on a retry: the
   * listeners reject it with {@link NonRetryableException}, the endpoint with 400.
   */
  public String brokenRule() {
    if (account == null || account.isBlank()) {
      return "\"account\" must be a non-blank string";
    }
    if (amountCents <= 0) {
      return "\"amountCents\" must be a positive integer, but was " + amountCents;
    }
    return null;
  }
}
