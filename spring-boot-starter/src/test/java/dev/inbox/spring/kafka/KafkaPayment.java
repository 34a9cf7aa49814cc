package dev.inbox.spring.kafka;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A JPA write of a listener. The key is not unique here, so that a doubled effect shows. */
@Entity
@Table(name = "kafka_payments", schema = "boot_kafka")
public class KafkaPayment {
  @Id @GeneratedValue private Long id;
  private String paymentKey;

  protected KafkaPayment() {}

  public KafkaPayment(String paymentKey) {
    this.paymentKey = paymentKey;
  }

  public String getPaymentKey() {
    return paymentKey;
  }
}
