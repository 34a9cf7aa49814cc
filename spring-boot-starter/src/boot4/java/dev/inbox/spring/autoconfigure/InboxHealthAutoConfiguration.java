package dev.inbox.spring.autoconfigure;

import dev.inbox.Inbox;
import dev.inbox.spring.InboxHealth;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The Actuator health indicator "inbox" on Spring Boot 4 ({@code spring-boot-health}). Boot 3's
 * twin, in {@code src/boot3}, is the same with Boot 3's package; both only adapt {@link
 * InboxHealth}, so keep them this small. {@link InboxHealth} is an {@code InboxListener}: the
 * inbox's settings take it with the other listeners, and the janitor reports to it each round.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(Inbox.class)
@ConditionalOnProperty(prefix = "inbox.health", name = "enabled", matchIfMissing = true)
public class InboxHealthAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  InboxHealth inboxHealth(InboxProperties properties) {
    return new InboxHealth(
        properties.getJanitorInterval(), properties.getHealth().getInProgressThreshold());
  }

  @Bean
  @ConditionalOnMissingBean(name = "inboxHealthIndicator")
  HealthIndicator inboxHealthIndicator(InboxHealth health) {
    return () -> {
      InboxHealth.Report report = health.report();
      return (report.up() ? Health.up() : Health.down()).withDetails(report.details()).build();
    };
  }
}
