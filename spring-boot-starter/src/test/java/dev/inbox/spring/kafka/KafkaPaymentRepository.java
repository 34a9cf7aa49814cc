package dev.inbox.spring.kafka;

import org.springframework.data.jpa.repository.JpaRepository;

public interface KafkaPaymentRepository extends JpaRepository<KafkaPayment, Long> {
  long countByPaymentKey(String paymentKey);
}
