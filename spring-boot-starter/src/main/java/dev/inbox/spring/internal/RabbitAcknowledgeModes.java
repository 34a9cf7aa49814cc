package dev.inbox.spring.internal;

import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The acknowledge mode of the listener containers that consume a queue. One {@link
 * RabbitDeliveryAdvice} serves every container of a factory, and {@code @RabbitListener(ackMode =
 * ...)} gives one container a mode of its own, so the mode is looked up by the delivery's queue
 * among the containers of the {@link RabbitListenerEndpointRegistry} and those declared as beans,
 * when the inbox skips a duplicate (only then: the lookup is not on the path of a new message).
 */
final class RabbitAcknowledgeModes {
  private final ListableBeanFactory beans;

  RabbitAcknowledgeModes(ListableBeanFactory beans) {
    this.beans = beans;
  }

  /** The one mode of the containers that consume this queue. */
  AcknowledgeMode of(String queue) {
    Set<AcknowledgeMode> modes =
        containers()
            .filter(container -> Arrays.asList(container.getQueueNames()).contains(queue))
            .map(AbstractMessageListenerContainer::getAcknowledgeMode)
            .collect(Collectors.toCollection(TreeSet::new));
    if (modes.size() == 1) {
      return modes.iterator().next();
    }
    if (modes.isEmpty()) {
      throw new IllegalStateException(
          "no listener container consumes queue '"
              + queue
              + "', from which the inbox got a delivery, which indicates a bug");
    }
    throw new IllegalStateException(
        "the listener containers of queue '"
            + queue
            + "' acknowledge in different modes "
            + modes
            + ", so the inbox cannot tell whether to acknowledge a skipped duplicate itself;"
            + " give them one ack mode");
  }

  private Stream<AbstractMessageListenerContainer> containers() {
    Stream<MessageListenerContainer> registered =
        beans.getBeanProvider(RabbitListenerEndpointRegistry.class).stream()
            .flatMap(registry -> registry.getListenerContainers().stream());
    Stream<MessageListenerContainer> declared =
        beans.getBeansOfType(MessageListenerContainer.class, false, false).values().stream();
    return Stream.concat(registered, declared)
        .distinct()
        .filter(AbstractMessageListenerContainer.class::isInstance)
        .map(AbstractMessageListenerContainer.class::cast);
  }
}
