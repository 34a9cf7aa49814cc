package dev.inbox.spring.internal;

import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;

/**
 * Adds the inbox's dead-letter headers to every {@link DeadLetterPublishingRecoverer} bean, next to
 * the headers functions the application gave it (added, never replacing them).
 */
public final class DeadLetterRecovererPostProcessor implements BeanPostProcessor {
  private final Supplier<BiFunction<ConsumerRecord<?, ?>, Exception, Headers>> headers;

  public DeadLetterRecovererPostProcessor(
      Supplier<BiFunction<ConsumerRecord<?, ?>, Exception, Headers>> headers) {
    this.headers = headers;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof DeadLetterPublishingRecoverer recoverer) {
      recoverer.addHeadersFunction(headers.get());
    }
    return bean;
  }
}
