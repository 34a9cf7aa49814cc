package dev.inbox.spring.rabbit;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.AsyncConsumerStartedEvent;
import org.springframework.context.ApplicationListener;

/**
 * Counts the consumers each queue's containers started: a container starts a new consumer when the
 * broker closes the channel of the one before, as it does on an acknowledgement of an unknown
 * delivery tag.
 */
class ConsumerStarts implements ApplicationListener<AsyncConsumerStartedEvent> {
  private final Map<String, AtomicInteger> starts = new ConcurrentHashMap<>();

  @Override
  public void onApplicationEvent(AsyncConsumerStartedEvent event) {
    if (event.getSource() instanceof AbstractMessageListenerContainer container) {
      for (String queue : container.getQueueNames()) {
        starts.computeIfAbsent(queue, q -> new AtomicInteger()).incrementAndGet();
      }
    }
  }

  int of(String queue) {
    AtomicInteger count = starts.get(queue);
    return count == null ? 0 : count.get();
  }
}
