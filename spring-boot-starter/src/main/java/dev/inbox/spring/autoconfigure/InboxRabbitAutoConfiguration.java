package dev.inbox.spring.autoconfigure;

import dev.inbox.Inbox;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spring.internal.InboxListenerInterceptor;
import dev.inbox.spring.internal.ListenerTransactionsPostProcessor;
import dev.inbox.spring.internal.RabbitContainerFactoryPostProcessor;
import java.util.List;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The inbox under every {@code @RabbitListener}, in Spring AMQP's own container (its ack mode,
 * concurrency, retry and {@code MessageRecoverer} stay the application's), by the same mechanism as
 * {@link InboxKafkaAutoConfiguration}: the message's key (its {@code messageId}, else the {@code
 * idempotency-key} header) is claimed in the listener's {@code @Transactional}, scoped by the
 * queue, its record written completed to commit with the listener's writes; a duplicate is
 * acknowledged without calling the listener; a failure counts an attempt and follows the
 * container's retry, and a key that gave up reaches the recoverer. A listener method that is not
 * {@code @Transactional} stops the application at startup.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnClass(RabbitListener.class)
@ConditionalOnBean(Inbox.class)
@ConditionalOnProperty(prefix = "inbox.listeners", name = "enabled", matchIfMissing = true)
public class InboxRabbitAutoConfiguration {

  @Bean
  static ListenerTransactionsPostProcessor inboxRabbitListenerTransactions(
      ObjectProvider<Inbox> inbox, ObjectProvider<CallerTransactions> callerTransactions) {
    return new ListenerTransactionsPostProcessor(
        "@RabbitListener",
        List.of(RabbitListener.class, RabbitHandler.class),
        new InboxListenerInterceptor(inbox::getObject, callerTransactions::getObject));
  }

  @Bean
  static RabbitContainerFactoryPostProcessor inboxRabbitContainerFactories() {
    return new RabbitContainerFactoryPostProcessor();
  }
}
