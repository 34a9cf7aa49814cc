package dev.inbox.benchmarks;

import java.nio.charset.StandardCharsets;

/**
 * The wire form of a payment on every channel: the body is {@code account,amountCents} and the id
 * travels as the idempotency key (a header, a messageId), as a producer would send it.
 */
final class PaymentCodec {
  /** The Kafka header and HTTP header that carry the payment id. */
  static final String KAFKA_HEADER = "idempotency-key";

  private PaymentCodec() {}

  static byte[] body(Workload.Payment payment) {
    return (payment.account() + "," + payment.amountCents()).getBytes(StandardCharsets.US_ASCII);
  }

  static Workload.Payment payment(String id, byte[] body) {
    String text = new String(body, StandardCharsets.US_ASCII);
    int comma = text.indexOf(',');
    if (id == null || comma < 0) {
      throw new IllegalArgumentException("not a payment: id " + id + ", body '" + text + "'");
    }
    return new Workload.Payment(
        id, Integer.parseInt(text.substring(0, comma)), Long.parseLong(text.substring(comma + 1)));
  }
}
