package dev.inbox.spring.actuate;

import dev.inbox.Inbox;
import dev.inbox.spring.autoconfigure.InboxAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The Actuator endpoint {@code inbox}, when Actuator is on the classpath, the application has an
 * {@link Inbox} bean, and the endpoint is available: not exposed over HTTP unless {@code
 * management.endpoints.web.exposure.include} names it. The same class serves Spring Boot 3 and 4:
 * Actuator's endpoint API did not move between them.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(Inbox.class)
@ConditionalOnAvailableEndpoint(endpoint = InboxEndpoint.class)
@EnableConfigurationProperties(InboxEndpointProperties.class)
public class InboxEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  InboxEndpoint inboxEndpoint(Inbox inbox, InboxEndpointProperties properties) {
    return new InboxEndpoint(inbox.admin(), properties.getActor());
  }
}
