package dev.inbox.spring.autoconfigure;

import dev.inbox.Inbox;
import dev.inbox.kafka.KeyExtractor;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spring.KafkaDeadLetterHeaders;
import dev.inbox.spring.internal.DeadLetterRecovererPostProcessor;
import dev.inbox.spring.internal.InboxListenerInterceptor;
import dev.inbox.spring.internal.KafkaContainerFactoryPostProcessor;
import dev.inbox.spring.internal.ListenerTransactionsPostProcessor;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaHandler;
import org.springframework.kafka.annotation.KafkaListener;

/**
 * The inbox under every {@code @KafkaListener}, in Spring Kafka's own container (its concurrency,
 * {@code spring.kafka.*}, error handler and recoverer stay the application's):
 *
 * <ul>
 *   <li>each record's key (a {@code KeyExtractor<Object, Object>} bean, by default the {@code
 *       idempotency-key} header, else {@code topic-partition@offset}) is claimed in the listener
 *       method's {@code @Transactional}, scoped by the consumer group, its record written completed
 *       to commit with the method's writes;
 *   <li>a duplicate is not passed to the method and is acknowledged; a failure rolls back and
 *       counts an attempt, and the container's error handler retries it; after {@code
 *       inbox.max-attempts} the key gives up and the record goes to the error handler's recoverer;
 *   <li>a {@code DeadLetterPublishingRecoverer} bean adds the inbox's {@code x-inbox-*} headers to
 *       a record the inbox is why of ({@link KafkaDeadLetterHeaders}).
 * </ul>
 *
 * A listener method that is not {@code @Transactional} stops the application at startup.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnClass({KafkaListener.class, KeyExtractor.class})
@ConditionalOnBean(Inbox.class)
@ConditionalOnProperty(prefix = "inbox.listeners", name = "enabled", matchIfMissing = true)
public class InboxKafkaAutoConfiguration {

  @Bean
  static ListenerTransactionsPostProcessor inboxKafkaListenerTransactions(
      ObjectProvider<Inbox> inbox, ObjectProvider<CallerTransactions> callerTransactions) {
    return new ListenerTransactionsPostProcessor(
        "@KafkaListener",
        List.of(KafkaListener.class, KafkaHandler.class),
        new InboxListenerInterceptor(inbox::getObject, callerTransactions::getObject));
  }

  /** The inbox's x-inbox-* headers on what a DeadLetterPublishingRecoverer publishes. */
  @Bean
  @ConditionalOnMissingBean
  KafkaDeadLetterHeaders inboxKafkaDeadLetterHeaders(
      ObjectProvider<Inbox> inbox, ObjectProvider<KeyExtractor<Object, Object>> keys) {
    return new KafkaDeadLetterHeaders(
        inbox::getObject, keys.getIfAvailable(KeyExtractor::headerOrCoordinates));
  }

  @Bean
  static DeadLetterRecovererPostProcessor inboxDeadLetterRecoverers(
      ObjectProvider<KafkaDeadLetterHeaders> headers) {
    return new DeadLetterRecovererPostProcessor(headers::getObject);
  }

  @Bean
  static KafkaContainerFactoryPostProcessor inboxKafkaContainerFactories(
      ObjectProvider<KeyExtractor<Object, Object>> keys) {
    return new KafkaContainerFactoryPostProcessor(
        () -> keys.getIfAvailable(KeyExtractor::headerOrCoordinates));
  }
}
