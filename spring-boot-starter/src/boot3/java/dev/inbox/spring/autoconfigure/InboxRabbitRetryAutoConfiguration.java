package dev.inbox.spring.autoconfigure;

import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.amqp.RabbitProperties;
import org.springframework.boot.autoconfigure.amqp.RabbitRetryTemplateCustomizer;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.retry.policy.SimpleRetryPolicy;

/**
 * Boot's listener retry ({@code spring.rabbitmq.listener.*.retry}) on Spring Boot 3.5 does not retry
 * a {@link NonRetryableException}: the message goes to the {@code MessageRecoverer} after its first
 * attempt. Spring Retry's {@code RetryTemplate} does not expose the policy Boot gave it, so the
 * policy is made anew with the same max-attempts and a classifier that searches the cause chain
 * (the listener's exception arrives wrapped). Boot 4's twin is in {@code src/boot4}.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnClass(RabbitRetryTemplateCustomizer.class)
@ConditionalOnBean(Inbox.class)
@ConditionalOnProperty(prefix = "inbox.listeners", name = "enabled", matchIfMissing = true)
public class InboxRabbitRetryAutoConfiguration {

  /** First, so that an application's own customizer runs after it and keeps the last word. */
  @Bean
  @Order(Ordered.HIGHEST_PRECEDENCE)
  RabbitRetryTemplateCustomizer inboxNonRetryableListenerRetry(RabbitProperties rabbit) {
    return (target, template) -> {
      if (target != RabbitRetryTemplateCustomizer.Target.LISTENER) {
        return;
      }
      RabbitProperties.Listener listener = rabbit.getListener();
      int maxAttempts =
          listener.getType() == RabbitProperties.ContainerType.DIRECT
              ? listener.getDirect().getRetry().getMaxAttempts()
              : listener.getSimple().getRetry().getMaxAttempts();
      template.setRetryPolicy(
          new SimpleRetryPolicy(
              maxAttempts, Map.of(NonRetryableException.class, false), true, true));
    };
  }
}
