package dev.inbox.benchmarks.spring;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.transaction.annotation.Transactional;

/** The record listener ({@code --listener record}): one payment per call, in its transaction. */
@ConditionalOnProperty(name = "bench.listener", havingValue = "record")
class PaymentListener {
  private final PaymentWrites writes;

  PaymentListener(PaymentWrites writes) {
    this.writes = writes;
  }

  @Transactional
  @KafkaListener(topics = "${bench.topic}")
  public void onPayment(ConsumerRecord<String, byte[]> record) {
    writes.apply(record);
  }
}
