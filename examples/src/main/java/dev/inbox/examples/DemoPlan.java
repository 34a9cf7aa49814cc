package dev.inbox.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * What the demo sends on each channel. Every tenth distinct HTTP payment is also sent over Kafka
 * with the same key, in the same scope, so that it must take effect once across both channels.
 *
 * @param kafka the Kafka payments (before the cross-channel sends are mixed in)
 * @param rabbit the RabbitMQ payments
 * @param http the HTTP payments
 * @param kafkaSends what the Kafka producer sends: its own payments and the cross-channel ones
 * @param crossChannel the HTTP payments also sent over Kafka
 */
record DemoPlan(
    PaymentPlan kafka,
    PaymentPlan rabbit,
    PaymentPlan http,
    List<Payment> kafkaSends,
    List<Payment> crossChannel) {

  static DemoPlan create(int count, double duplicateRate, long seed) {
    int httpCount = Math.max(1, count / 5);
    int rabbitCount = Math.max(1, (count - httpCount) / 2);
    PaymentPlan http = PaymentPlan.generate("http", httpCount, duplicateRate, seed);
    List<Payment> cross = new ArrayList<>();
    int i = 0;
    for (Payment payment : http.distinct().values()) {
      if (i++ % 10 == 0) {
        cross.add(payment);
      }
    }
    int kafkaCount = Math.max(1, count - httpCount - rabbitCount - cross.size());
    PaymentPlan kafka = PaymentPlan.generate("kafka", kafkaCount, duplicateRate, seed + 1);
    PaymentPlan rabbit = PaymentPlan.generate("rabbit", rabbitCount, duplicateRate, seed + 2);
    List<Payment> kafkaSends = new ArrayList<>(kafka.sends());
    Random random = new Random(seed + 3);
    for (Payment payment : cross) {
      kafkaSends.add(random.nextInt(kafkaSends.size() + 1), payment);
    }
    return new DemoPlan(kafka, rabbit, http, List.copyOf(kafkaSends), List.copyOf(cross));
  }

  long expectedDistinct() {
    return kafka.distinct().size() + http.distinct().size() + rabbit.distinct().size();
  }

  long expectedSumCents() {
    return kafka.sumCents() + http.sumCents() + rabbit.sumCents();
  }

  int sent() {
    return kafkaSends.size() + http.sends().size() + rabbit.sends().size();
  }
}
