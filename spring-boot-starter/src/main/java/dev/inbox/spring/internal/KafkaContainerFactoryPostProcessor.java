package dev.inbox.spring.internal;

import dev.inbox.NonRetryableException;
import dev.inbox.kafka.KeyExtractor;
import java.util.function.Supplier;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.kafka.config.AbstractKafkaListenerContainerFactory;
import org.springframework.kafka.listener.BatchInterceptor;
import org.springframework.kafka.listener.CompositeBatchInterceptor;
import org.springframework.kafka.listener.CompositeRecordInterceptor;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.RecordInterceptor;

/**
 * Fits the inbox into the application's own Spring Kafka setup, changing nothing else of it: every
 * listener container factory gets the {@link KafkaDeliveryInterceptor} ahead of its own record and
 * batch interceptors, and every {@link DefaultErrorHandler} bean learns that a {@link
 * NonRetryableException} (a key that gave up or mismatches, or the listener's own) goes to its
 * recoverer at once instead of being retried, and commits a recovered record's offset in {@code
 * MANUAL_IMMEDIATE} ack mode too.
 */
public final class KafkaContainerFactoryPostProcessor implements BeanPostProcessor {
  private final Supplier<KeyExtractor<Object, Object>> keys;

  public KafkaContainerFactoryPostProcessor(Supplier<KeyExtractor<Object, Object>> keys) {
    this.keys = keys;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof AbstractKafkaListenerContainerFactory factory) {
      KafkaDeliveryInterceptor ours = new KafkaDeliveryInterceptor(keys.get());
      // Spring Kafka 4 has public getters for these; 3.3 (Boot 3.5) has only the private fields.
      DirectFieldAccessor fields = new DirectFieldAccessor(factory);
      RecordInterceptor records = (RecordInterceptor) fields.getPropertyValue("recordInterceptor");
      factory.setRecordInterceptor(
          records == null ? ours : new CompositeRecordInterceptor(ours, records));
      BatchInterceptor batches = (BatchInterceptor) fields.getPropertyValue("batchInterceptor");
      factory.setBatchInterceptor(
          batches == null ? ours : new CompositeBatchInterceptor(ours, batches));
    }
    if (bean instanceof DefaultErrorHandler errorHandler) {
      errorHandler.addNotRetryableExceptions(NonRetryableException.class);
      // A record the inbox refuses never reaches the listener's Acknowledgment, so only the error
      // handler can commit it once its recoverer has dead-lettered it. It does after handling in
      // MANUAL mode, but in MANUAL_IMMEDIATE only with commitRecovered (Spring Kafka's default is
      // false, which only that mode reads): else a restart or rebalance before a later record's
      // acknowledgement delivers it again, and it is dead-lettered a second time.
      errorHandler.setCommitRecovered(true);
    }
    return bean;
  }
}
