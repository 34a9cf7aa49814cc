package dev.inbox.benchmarks.spring;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the listeners write for a payment, as a payments service would: the payment's INSERT and its
 * account's UPDATE through JdbcTemplate, in the listener's transaction.
 *
 * <p>With the starter's interception on ({@code inbox.listeners.enabled}), a re-send never reaches
 * the listener. Without it, re-sends are dropped here with an in-memory set, as the {@code kafka}
 * scenario's plain consumer does: the upper bound, since it stores no keys (and would forget them
 * on a restart). Only the container's one consumer thread calls it (concurrency 1).
 */
class PaymentWrites {
  /** The header that carries the payment id, as the starter's default key extractor reads it. */
  static final String KEY_HEADER = "idempotency-key";

  private final JdbcTemplate jdbc;
  private final String insertPayment;
  private final String creditAccount;
  private final Set<String> seen;

  PaymentWrites(
      JdbcTemplate jdbc,
      @Value("${inbox.schema}") String schema,
      @Value("${inbox.listeners.enabled}") boolean inbox) {
    PaymentsTables tables = new PaymentsTables(schema);
    this.jdbc = jdbc;
    this.insertPayment = tables.insertPayment();
    this.creditAccount = tables.creditAccount();
    this.seen = inbox ? null : new HashSet<>();
  }

  /** Writes the record's payment, unless plain has seen its id already. */
  void apply(ConsumerRecord<String, byte[]> record) {
    Workload.Payment payment = payment(record);
    if (seen != null && !seen.add(payment.id())) {
      return;
    }
    jdbc.update(insertPayment, payment.id(), payment.account(), payment.amountCents());
    jdbc.update(creditAccount, payment.amountCents(), payment.account());
  }

  /** The wire form: body {@code account,amountCents}, the id in the {@value #KEY_HEADER} header. */
  static Workload.Payment payment(ConsumerRecord<?, byte[]> record) {
    Header key = record.headers().lastHeader(KEY_HEADER);
    String text = new String(record.value(), StandardCharsets.US_ASCII);
    int comma = text.indexOf(',');
    if (key == null || comma < 0) {
      throw new IllegalArgumentException(
          "not a payment at " + record.topic() + "-" + record.partition() + "@" + record.offset());
    }
    return new Workload.Payment(
        new String(key.value(), StandardCharsets.UTF_8),
        Integer.parseInt(text.substring(0, comma)),
        Long.parseLong(text.substring(comma + 1)));
  }

  static byte[] body(Workload.Payment payment) {
    return (payment.account() + "," + payment.amountCents()).getBytes(StandardCharsets.US_ASCII);
  }
}
