package dev.inbox.spring.autoconfigure;

import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.spring.internal.NonRetryableCauses;
import java.util.function.Predicate;
import org.springframework.boot.amqp.autoconfigure.RabbitListenerRetrySettingsCustomizer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Boot's listener retry ({@code spring.rabbitmq.listener.*.retry}) on Spring Boot 4 does not retry
 * a {@link NonRetryableException}: the message goes to the {@code MessageRecoverer} after its first
 * attempt. Added to the retry policy's predicate (Spring Framework's core retry), next to any
 * predicate, includes or excludes the application sets. Boot 3's twin is in {@code src/boot3}.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnClass(RabbitListenerRetrySettingsCustomizer.class)
@ConditionalOnBean(Inbox.class)
@ConditionalOnProperty(prefix = "inbox.listeners", name = "enabled", matchIfMissing = true)
public class InboxRabbitRetryAutoConfiguration {

  /** First, so that an application's customizer sees (and may extend) the inbox's predicate. */
  @Bean
  @Order(Ordered.HIGHEST_PRECEDENCE)
  RabbitListenerRetrySettingsCustomizer inboxNonRetryableListenerRetry() {
    return settings -> {
      Predicate<Throwable> retryable = failure -> !NonRetryableCauses.in(failure);
      Predicate<Throwable> existing = settings.getExceptionPredicate();
      settings.setExceptionPredicate(existing == null ? retryable : retryable.and(existing));
    };
  }
}
