package dev.inbox.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A reproducible stream of payments with re-sends: the same seed gives the same stream. A re-send
 * repeats an earlier payment with the same id and the same payload, as a producer does after a lost
 * ack.
 *
 * @param sends every payment in send order, re-sends included
 * @param distinct the distinct payments, by id
 */
public record PaymentPlan(List<Payment> sends, Map<String, Payment> distinct) {
  public static final int ACCOUNTS = 1_000;

  public static PaymentPlan generate(String idPrefix, int count, double duplicateRate, long seed) {
    if (count < 0) {
      throw new IllegalArgumentException("count must be zero or more, but was " + count);
    }
    if (duplicateRate < 0 || duplicateRate >= 1) {
      throw new IllegalArgumentException(
          "duplicate-rate must be at least 0 and below 1, but was " + duplicateRate);
    }
    Random random = new Random(seed);
    List<Payment> sends = new ArrayList<>(count);
    List<Payment> originals = new ArrayList<>();
    Map<String, Payment> distinct = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      if (!originals.isEmpty() && random.nextDouble() < duplicateRate) {
        sends.add(originals.get(random.nextInt(originals.size())));
      } else {
        Payment payment =
            new Payment(
                idPrefix + "-" + seed + "-" + originals.size(),
                "acc-" + random.nextInt(ACCOUNTS),
                1 + random.nextInt(10_000));
        originals.add(payment);
        distinct.put(payment.paymentId(), payment);
        sends.add(payment);
      }
    }
    return new PaymentPlan(List.copyOf(sends), distinct);
  }

  public long sumCents() {
    return distinct.values().stream().mapToLong(Payment::amountCents).sum();
  }

  /** The last line of every producer: {@code {"sent":N,"distinct":K,"sumCents":S}}. */
  public String summaryJson() {
    return "{\"sent\":"
        + sends.size()
        + ",\"distinct\":"
        + distinct.size()
        + ",\"sumCents\":"
        + sumCents()
        + "}";
  }
}
