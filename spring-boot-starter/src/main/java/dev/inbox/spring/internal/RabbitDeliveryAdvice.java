package dev.inbox.spring.internal;

import com.rabbitmq.client.Channel;
import java.util.List;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.amqp.core.Message;

/**
 * Tells the inbox which messages a Spring AMQP container is about to hand to its listener on this
 * thread ({@link CurrentDelivery}). It is the outermost advice of the container's chain (so that
 * the delivery stays known across a retry interceptor's attempts), around {@code
 * invokeListener(Channel, data)}, where data is one {@link Message} or a list of them.
 */
public final class RabbitDeliveryAdvice implements MethodInterceptor {
  private final RabbitAcknowledgeModes acknowledgeModes;

  RabbitDeliveryAdvice(RabbitAcknowledgeModes acknowledgeModes) {
    this.acknowledgeModes = acknowledgeModes;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Object[] arguments = invocation.getArguments();
    if (arguments.length != 2 || !(arguments[0] instanceof Channel channel)) {
      return invocation.proceed();
    }
    if (arguments[1] instanceof Message message) {
      CurrentDelivery.set(new RabbitDelivery(channel, List.of(message), false, acknowledgeModes));
    } else if (arguments[1] instanceof List<?> list
        && !list.isEmpty()
        && list.get(0) instanceof Message) {
      CurrentDelivery.set(
          new RabbitDelivery(channel, (List<Message>) list, true, acknowledgeModes));
    } else {
      return invocation.proceed();
    }
    try {
      return invocation.proceed();
    } finally {
      CurrentDelivery.clear();
    }
  }
}
