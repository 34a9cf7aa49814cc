package dev.inbox.spring.internal;

import org.aopalliance.aop.Advice;
import org.springframework.amqp.rabbit.config.BaseRabbitListenerContainerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Puts the {@link RabbitDeliveryAdvice} first in every Spring AMQP listener container factory's
 * advice chain, ahead of the application's own advice (Boot's retry interceptor with its {@code
 * MessageRecoverer}, such as a {@code RepublishMessageRecoverer}), which it leaves as it is. First,
 * because a stateless retry interceptor runs its attempts without the advice after it: outside it,
 * the delivery stays known to every attempt, each of which still calls the listener through its
 * transactional proxy, where the inbox claims afresh.
 */
public final class RabbitContainerFactoryPostProcessor
    implements BeanPostProcessor, BeanFactoryAware {
  private RabbitAcknowledgeModes acknowledgeModes;

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.acknowledgeModes = new RabbitAcknowledgeModes((ListableBeanFactory) beanFactory);
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof BaseRabbitListenerContainerFactory<?> factory) {
      Advice[] chain = factory.getAdviceChain();
      Advice[] extended = new Advice[chain == null ? 1 : chain.length + 1];
      extended[0] = new RabbitDeliveryAdvice(acknowledgeModes);
      if (chain != null) {
        System.arraycopy(chain, 0, extended, 1, chain.length);
      }
      factory.setAdviceChain(extended);
    }
    return bean;
  }
}
