package dev.inbox.benchmarks.spring;

import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.transaction.annotation.Transactional;

/**
 * The batch listener ({@code --listener batch}): a poll's records per call, in one transaction,
 * with the same statements per payment as the record listener. With the starter, the call gets the
 * new records only, their keys claimed together.
 */
@ConditionalOnProperty(name = "bench.listener", havingValue = "batch")
class BatchPaymentListener {
  private final PaymentWrites writes;

  BatchPaymentListener(PaymentWrites writes) {
    this.writes = writes;
  }

  @Transactional
  @KafkaListener(topics = "${bench.topic}", batch = "true")
  public void onPayments(List<ConsumerRecord<String, byte[]>> records) {
    records.forEach(writes::apply);
  }
}
