package dev.inbox.spring.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionInterceptor;

/**
 * Puts the {@link InboxListenerInterceptor} on every listener method (annotated with one of the
 * transport's listener annotations), right after the bean's {@link TransactionInterceptor}, so that
 * it runs inside the method's transaction, whatever order other advice has. A listener method that
 * is not {@code @Transactional} stops the application at startup with a message that says what to
 * add: without a transaction the key could not commit with the listener's writes.
 *
 * <p>Runs after the auto-proxy creators (they are ordered first), so that it finds the proxy that
 * {@code @Transactional} made, and adds to it rather than proxying again.
 */
public final class ListenerTransactionsPostProcessor implements BeanPostProcessor, Ordered {
  private static final TransactionAttributeSource TRANSACTIONAL =
      new AnnotationTransactionAttributeSource();

  private final String transport;
  private final List<Class<? extends Annotation>> listenerAnnotations;
  private final Advice interceptor;

  /**
   * @param transport what the listeners consume, for messages ("@KafkaListener")
   * @param listenerAnnotations the annotations that make a method a listener ({@code
   *     KafkaListener}, {@code KafkaHandler})
   */
  public ListenerTransactionsPostProcessor(
      String transport, List<Class<? extends Annotation>> listenerAnnotations, Advice interceptor) {
    this.transport = transport;
    this.listenerAnnotations = List.copyOf(listenerAnnotations);
    this.interceptor = interceptor;
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> targetClass = AopUtils.getTargetClass(bean);
    Map<Method, Boolean> listeners =
        MethodIntrospector.selectMethods(
            targetClass,
            (MethodIntrospector.MetadataLookup<Boolean>)
                method -> isListener(method) ? true : null);
    if (listeners.isEmpty()) {
      return bean;
    }
    for (Method method : listeners.keySet()) {
      if (TRANSACTIONAL.getTransactionAttribute(method, targetClass) == null) {
        throw notTransactional(beanName, targetClass, method);
      }
    }
    Advised advised = bean instanceof Advised a ? a : null;
    int transactions = advised == null ? -1 : transactionAdvisor(advised);
    if (transactions < 0) {
      throw notTransactional(beanName, targetClass, listeners.keySet().iterator().next());
    }
    if (advised.isFrozen()) {
      throw new BeanInitializationException(
          "the proxy of bean '"
              + beanName
              + "' is frozen, so the inbox cannot run inside its "
              + transport
              + " methods' transactions; do not freeze it");
    }
    advised.addAdvisor(
        transactions + 1, new DefaultPointcutAdvisor(new ListenerMethods(), interceptor));
    return bean;
  }

  private boolean isListener(Method method) {
    for (Class<? extends Annotation> annotation : listenerAnnotations) {
      if (AnnotatedElementUtils.hasAnnotation(method, annotation)) {
        return true;
      }
    }
    return false;
  }

  private static int transactionAdvisor(Advised advised) {
    Advisor[] advisors = advised.getAdvisors();
    for (int i = 0; i < advisors.length; i++) {
      if (advisors[i].getAdvice() instanceof TransactionInterceptor) {
        return i;
      }
    }
    return -1;
  }

  private BeanInitializationException notTransactional(
      String beanName, Class<?> targetClass, Method method) {
    return new BeanInitializationException(
        transport
            + " method "
            + targetClass.getName()
            + "."
            + method.getName()
            + " (bean '"
            + beanName
            + "') is not transactional, so the inbox cannot commit its key with the method's"
            + " writes: annotate the method or its class with @Transactional (with the transaction"
            + " manager of the inbox's DataSource), or set inbox.listeners.enabled=false to run"
            + " listeners without the inbox");
  }

  /** The listener methods of the advised bean. */
  private final class ListenerMethods extends StaticMethodMatcherPointcut {
    @Override
    public boolean matches(Method method, Class<?> targetClass) {
      Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
      return isListener(specific) || isListener(method);
    }
  }
}
