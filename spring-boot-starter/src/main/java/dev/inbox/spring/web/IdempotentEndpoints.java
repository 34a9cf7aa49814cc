package dev.inbox.spring.web;

import dev.inbox.Inbox;
import dev.inbox.http.IdempotencyFilter;
import dev.inbox.http.ScopeResolver;
import dev.inbox.spi.CallerTransactions;
import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.DefaultTransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttributeSource;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * The application's {@link Idempotent} handler methods, found once the context is up, each with its
 * filter and transaction, checked then: a method whose transaction cannot hold its key fails the
 * startup. A request is matched to its handler by asking the application's handler mappings in the
 * {@code DispatcherServlet}'s own order, on the request as the container delivered it, so that the
 * filter protects exactly the method the servlet will run: any spelling of a path that reaches the
 * method is protected, and none that does not.
 */
final class IdempotentEndpoints implements SmartInitializingSingleton {
  private static final String[] ALL_METHODS = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"
  };

  private final ListableBeanFactory beans;
  private final Inbox inbox;
  private final CallerTransactions callerTransactions;
  private final InboxWebProperties properties;
  private final ScopeResolver defaultScopes;
  private final OutcomeRecorder outcomes;
  private final ProblemAnswers problems;

  private volatile Map<Method, IdempotentEndpoint> endpoints = Map.of();
  private volatile Set<String> httpMethods = Set.of();
  private volatile List<HandlerMapping> mappings = List.of();

  IdempotentEndpoints(
      ListableBeanFactory beans,
      Inbox inbox,
      CallerTransactions callerTransactions,
      InboxWebProperties properties,
      ScopeResolver defaultScopes,
      OutcomeRecorder outcomes,
      ProblemAnswers problems) {
    this.beans = beans;
    this.inbox = inbox;
    this.callerTransactions = callerTransactions;
    this.properties = properties;
    this.defaultScopes = defaultScopes;
    this.outcomes = outcomes;
    this.problems = problems;
  }

  @Override
  public void afterSingletonsInstantiated() {
    // The source Spring's own transaction interceptor reads, so that both see the same attributes
    // (it honours non-public methods on class-based proxies, as the interceptor does).
    TransactionAttributeSource attributes =
        beans
            .getBeanProvider(TransactionAttributeSource.class)
            .getIfUnique(() -> new AnnotationTransactionAttributeSource(false));
    Map<Method, IdempotentEndpoint> found = new HashMap<>();
    Set<String> methods = new HashSet<>();
    for (RequestMappingInfoHandlerMapping mapping :
        beans.getBeansOfType(RequestMappingInfoHandlerMapping.class).values()) {
      for (Map.Entry<RequestMappingInfo, HandlerMethod> entry :
          mapping.getHandlerMethods().entrySet()) {
        HandlerMethod handler = entry.getValue();
        Idempotent idempotent = annotationOf(handler);
        if (idempotent == null) {
          continue;
        }
        found.computeIfAbsent(handler.getMethod(), m -> endpoint(handler, idempotent, attributes));
        Set<?> mapped = entry.getKey().getMethodsCondition().getMethods();
        if (mapped.isEmpty()) {
          methods.addAll(List.of(ALL_METHODS));
        }
        mapped.forEach(m -> methods.add(m.toString()));
        if (methods.contains("GET")) {
          methods.add("HEAD");
        }
      }
    }
    List<HandlerMapping> ordered =
        new ArrayList<>(beans.getBeansOfType(HandlerMapping.class).values());
    AnnotationAwareOrderComparator.sort(ordered);
    this.mappings = List.copyOf(ordered);
    this.httpMethods = Set.copyOf(methods);
    this.endpoints = Collections.unmodifiableMap(found);
  }

  /** The endpoint of the handler method, when it is {@link Idempotent}. */
  Optional<IdempotentEndpoint> of(Method method) {
    return Optional.ofNullable(endpoints.get(method));
  }

  /** The endpoint the request is routed to, or null when its handler is not {@link Idempotent}. */
  IdempotentEndpoint routed(HttpServletRequest request) {
    if (endpoints.isEmpty()
        || !httpMethods.contains(request.getMethod().toUpperCase(Locale.ROOT))) {
      return null;
    }
    HttpServletRequest probe = new AttributeOverlay(request);
    ServletRequestPathUtils.parseAndCache(probe);
    for (HandlerMapping mapping : mappings) {
      HandlerExecutionChain chain;
      try {
        chain = mapping.getHandler(probe);
      } catch (Exception e) {
        // 405, 406, 415 and the like: the DispatcherServlet answers them without a handler.
        return null;
      }
      if (chain != null) {
        return chain.getHandler() instanceof HandlerMethod handler
            ? endpoints.get(handler.getMethod())
            : null;
      }
    }
    return null;
  }

  private static Idempotent annotationOf(HandlerMethod handler) {
    Idempotent onMethod =
        AnnotatedElementUtils.findMergedAnnotation(handler.getMethod(), Idempotent.class);
    return onMethod != null
        ? onMethod
        : AnnotatedElementUtils.findMergedAnnotation(handler.getBeanType(), Idempotent.class);
  }

  private IdempotentEndpoint endpoint(
      HandlerMethod handler, Idempotent idempotent, TransactionAttributeSource attributes) {
    String name = ClassUtils.getQualifiedMethodName(handler.getMethod(), handler.getBeanType());
    TransactionAttribute declared =
        attributes.getTransactionAttribute(handler.getMethod(), handler.getBeanType());
    TransactionAttribute attribute =
        declared != null ? declared : new DefaultTransactionAttribute();
    requireJoinable(name, attribute);
    DefaultTransactionDefinition definition = new DefaultTransactionDefinition(attribute);
    // The method's REQUIRED, SUPPORTS, MANDATORY or NESTED all join the transaction begun here.
    definition.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRED);
    definition.setName(name);
    IdempotencyFilter filter =
        IdempotencyFilter.builder(inbox)
            .methods(ALL_METHODS)
            .keyRequired(idempotent.keyRequired())
            .scopeResolver(scopes(name, idempotent))
            .inFlightWait(properties.getInFlightWait())
            .retryAfter(properties.getRetryAfter())
            .maxRequestBody(bytes("inbox.web.max-request-body", properties.getMaxRequestBody()))
            .maxStoredBody(bytes("inbox.web.max-stored-body", properties.getMaxStoredBody()))
            .listener(outcomes)
            .build();
    return new IdempotentEndpoint(
        name,
        filter,
        idempotent.keyRequired(),
        idempotent.scopeResolver(),
        transactionManager(name, attribute),
        definition,
        callerTransactions,
        outcomes,
        problems,
        handler,
        properties.getRetryAfter());
  }

  /** A propagation that leaves the transaction begun for the key would commit without it. */
  private static void requireJoinable(String name, TransactionAttribute attribute) {
    String refused =
        switch (attribute.getPropagationBehavior()) {
          case TransactionDefinition.PROPAGATION_REQUIRES_NEW -> "REQUIRES_NEW";
          case TransactionDefinition.PROPAGATION_NOT_SUPPORTED -> "NOT_SUPPORTED";
          case TransactionDefinition.PROPAGATION_NEVER -> "NEVER";
          default -> null;
        };
    if (refused != null) {
      throw new IllegalStateException(
          "@Idempotent "
              + name
              + " is @Transactional(propagation = "
              + refused
              + "): its writes would commit apart from its Idempotency-Key; use REQUIRED (the"
              + " default), so that it joins the transaction that claims the key");
    }
    if (attribute.isReadOnly()) {
      throw new IllegalStateException(
          "@Idempotent "
              + name
              + " is @Transactional(readOnly = true), but its Idempotency-Key and response are"
              + " written in that transaction; remove readOnly");
    }
  }

  private PlatformTransactionManager transactionManager(
      String name, TransactionAttribute attribute) {
    String qualifier = attribute.getQualifier();
    try {
      return StringUtils.hasText(qualifier)
          ? BeanFactoryAnnotationUtils.qualifiedBeanOfType(
              beans, PlatformTransactionManager.class, qualifier)
          : beans.getBean(PlatformTransactionManager.class);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "@Idempotent "
              + name
              + " needs a PlatformTransactionManager"
              + (StringUtils.hasText(qualifier) ? " named '" + qualifier + "'" : "")
              + " on the inbox's DataSource to claim its key in: "
              + e.getMessage(),
          e);
    }
  }

  private ScopeResolver scopes(String name, Idempotent idempotent) {
    String bean = idempotent.scopeResolver();
    if (bean.isEmpty()) {
      return defaultScopes;
    }
    try {
      return beans.getBean(bean, ScopeResolver.class);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "@Idempotent(scopeResolver = \""
              + bean
              + "\") on "
              + name
              + " names no ScopeResolver bean: "
              + e.getMessage(),
          e);
    }
  }

  private static int bytes(String property, org.springframework.util.unit.DataSize size) {
    long bytes = size.toBytes();
    if (bytes < 0 || bytes >= Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          property
              + " must be between 0 and "
              + (Integer.MAX_VALUE - 1)
              + " bytes, but was "
              + size);
    }
    return (int) bytes;
  }
}
