package dev.inbox.spring.web;

import dev.inbox.Inbox;
import dev.inbox.http.IdempotencyFilter;
import dev.inbox.http.ScopeResolver;
import dev.inbox.http.micrometer.MicrometerIdempotencyListener;
import dev.inbox.http.spi.IdempotencyListener;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spring.autoconfigure.InboxAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.MessageSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.handler.HandlerExceptionResolverComposite;
import org.springframework.web.servlet.mvc.method.annotation.ExceptionHandlerExceptionResolver;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * {@link Idempotent} handler methods in a servlet web application with the HTTP adapter ({@code
 * inbox-http-adapter}) on its class path: a filter in front of them (after Spring Security), their
 * default scope (the principal, or {@code inbox.web.anonymous-scope}), their meters when Micrometer
 * is set up, and their OpenAPI description when springdoc is there. Turned off with {@code
 * inbox.web.enabled=false}. Declare a {@link ScopeResolver} bean named {@code
 * inboxWebScopeResolver} to replace the default scope, or an {@link IdempotencyListener} bean to
 * hear every request's outcome.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({IdempotencyFilter.class, DispatcherServlet.class})
@ConditionalOnBean(Inbox.class)
@ConditionalOnProperty(prefix = "inbox.web", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(InboxWebProperties.class)
public class InboxWebAutoConfiguration {
  /** The name of the default scope resolver bean; declare one by that name to replace it. */
  public static final String SCOPE_RESOLVER_BEAN = "inboxWebScopeResolver";

  @Bean(name = SCOPE_RESOLVER_BEAN)
  @ConditionalOnMissingBean(name = SCOPE_RESOLVER_BEAN)
  ScopeResolver inboxWebScopeResolver(InboxWebProperties properties) {
    return new PrincipalScope(properties.getAnonymousScope());
  }

  @Bean
  IdempotentEndpoints inboxIdempotentEndpoints(
      ListableBeanFactory beans,
      MessageSource messages,
      Inbox inbox,
      CallerTransactions callerTransactions,
      InboxWebProperties properties,
      @Qualifier(SCOPE_RESOLVER_BEAN) ScopeResolver scopes,
      ObjectProvider<IdempotencyListener> listener) {
    OutcomeRecorder outcomes =
        new OutcomeRecorder(listener.getIfUnique(() -> IdempotencyListener.NOOP));
    ProblemAnswers problems =
        new ProblemAnswers(
            () -> beans.getBean(RequestMappingHandlerAdapter.class).getMessageConverters(),
            SingletonSupplier.of(() -> exceptionHandlerResolvers(beans)),
            messages);
    return new IdempotentEndpoints(
        beans, inbox, callerTransactions, properties, scopes, outcomes, problems);
  }

  /**
   * The resolvers that run the application's {@code @ExceptionHandler} methods, in the order the
   * {@code DispatcherServlet} asks them; the others (the default resolver's {@code sendError})
   * would answer with the container's error page instead of a problem.
   */
  private static List<HandlerExceptionResolver> exceptionHandlerResolvers(
      ListableBeanFactory beans) {
    List<HandlerExceptionResolver> all =
        new ArrayList<>(beans.getBeansOfType(HandlerExceptionResolver.class).values());
    AnnotationAwareOrderComparator.sort(all);
    List<HandlerExceptionResolver> found = new ArrayList<>();
    for (HandlerExceptionResolver resolver : all) {
      List<HandlerExceptionResolver> members =
          resolver instanceof HandlerExceptionResolverComposite composite
              ? composite.getExceptionResolvers()
              : List.of(resolver);
      for (HandlerExceptionResolver member : members) {
        if (member instanceof ExceptionHandlerExceptionResolver) {
          found.add(member);
        }
      }
    }
    return List.copyOf(found);
  }

  @Bean
  IdempotentEndpointFilter inboxIdempotentEndpointFilter(IdempotentEndpoints endpoints) {
    return new IdempotentEndpointFilter(endpoints);
  }

  /**
   * {@code inbox.http.requests} and {@code inbox.http.added.latency} in the application's registry.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  @ConditionalOnBean(MeterRegistry.class)
  static class MicrometerConfiguration {
    @Bean
    @ConditionalOnMissingBean
    IdempotencyListener inboxIdempotencyMicrometerListener(MeterRegistry registry) {
      return new MicrometerIdempotencyListener(registry);
    }
  }

  /** The idempotency policy of every {@link Idempotent} operation, in springdoc's OpenAPI. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(OperationCustomizer.class)
  static class OpenApiConfiguration {
    @Bean
    OperationCustomizer inboxIdempotentOperations(
        IdempotentEndpoints endpoints, Inbox inbox, InboxWebProperties properties) {
      return new IdempotentOperations(endpoints, inbox.settings().retention(), properties);
    }
  }
}
