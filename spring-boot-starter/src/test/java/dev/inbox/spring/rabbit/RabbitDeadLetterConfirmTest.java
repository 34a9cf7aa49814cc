package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.AmqpMessageReturnedException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.transaction.annotation.Transactional;

/**
 * An {@link InboxRepublishMessageRecoverer} whose dead letters no queue takes (its routing key
 * names a queue nobody declared), with publisher confirms and returns on: the broker returns each
 * dead letter, the recoverer throws, and the message stays on its queue, where a recoverer that
 * sent without waiting for the confirm let the container acknowledge it and lost it. Its subclasses
 * repeat this where a recoverer's exception alone would not requeue the message: in MANUAL mode and
 * with {@code default-requeue-rejected=false}.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RabbitDeadLetterConfirmTest.Topology.class,
      RabbitDeadLetterConfirmTest.RefusingListener.class
    },
    properties = {
      "inbox.schema=boot_rabbit_confirm",
      "spring.rabbitmq.publisher-confirm-type=correlated",
      "spring.rabbitmq.publisher-returns=true",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms"
    })
@TestPropertySource(properties = "test.queue.confirm=boot-confirm-${test.run}")
class RabbitDeadLetterConfirmTest {
  // Each class's queue is named in its @TestPropertySource, with this run's suffix: a queue of
  // its own, since contexts of the subclasses live on beside this one.
  private static final String RUN = TestRabbit.newQueueName("run");
  private static final String NO_SUCH_QUEUE = TestRabbit.newQueueName("boot-confirm-undeclared");
  private static final String CONTAINER = "boot-confirm";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    RabbitConnection.register(registry);
    TestApplication.database(registry);
    registry.add("test.run", () -> RUN);
  }

  /** The recoverer, recording what each of its calls threw. */
  static class RecordingRecoverer extends InboxRepublishMessageRecoverer {
    final List<RuntimeException> failures = new CopyOnWriteArrayList<>();

    RecordingRecoverer(RabbitTemplate template, Inbox inbox) {
      super(template, "", NO_SUCH_QUEUE, inbox);
    }

    @Override
    public void recover(Message message, Throwable cause) {
      try {
        super.recover(message, cause);
      } catch (RuntimeException e) {
        failures.add(e);
        throw e;
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Topology {
    @Bean
    Queue confirmQueue(@Value("${test.queue.confirm}") String queue) {
      return QueueBuilder.nonDurable(queue).expires(600_000).build();
    }

    @Bean
    RecordingRecoverer recoverer(RabbitTemplate template, Inbox inbox) {
      return new RecordingRecoverer(template, inbox);
    }
  }

  /** Refuses every message by policy, so that each goes to the recoverer at once. */
  @Component
  static class RefusingListener {
    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.confirm}")
    public void onMessage(String payload) {
      throw new NonRetryableException("payment " + payload + " is refused by policy");
    }
  }

  @Autowired RabbitTemplate rabbit;
  @Autowired MessageRecoverer recoverer;
  @Autowired RabbitListenerEndpointRegistry registry;
  @Autowired CachingConnectionFactory connections;

  @Value("${test.queue.confirm}")
  String queue;

  @Test
  void a_dead_letter_the_broker_returns_leaves_its_message_on_the_queue() throws Exception {
    RecordingRecoverer recording = (RecordingRecoverer) recoverer;
    String key = RabbitMessages.keys(1).get(0);
    RabbitMessages.send(rabbit, queue, key, key);
    // The second failure is of the message delivered again: the first did not lose it.
    Await.until(
        "two dead letters of the message returned",
        Duration.ofSeconds(60),
        () -> recording.failures.size() >= 2);
    registry.getListenerContainer(CONTAINER).stop();
    // Requeued whatever the container's default for rejected messages and its acknowledge mode.
    assertThat(recording.failures.get(0))
        .isInstanceOf(ImmediateRequeueAmqpException.class)
        .cause()
        .isInstanceOf(AmqpMessageReturnedException.class)
        .hasMessageContaining(NO_SUCH_QUEUE);
    // Each failure makes the container restart its consumer, and one restarting as the container
    // stops may come back or leave the message unacknowledged on a cached channel that has no
    // consumer: stop again until the queue has no consumer, then close the connection, which
    // returns every unacknowledged message to its queue. Only a message nobody acknowledged is
    // back on it.
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    Await.until(
        "the message back on its queue once its consumer stopped",
        Duration.ofSeconds(60),
        () -> {
          if (consumers(queue) > 0) {
            container.stop();
            return false;
          }
          connections.resetConnection();
          return RabbitMessages.ready(rabbit, queue) == 1;
        });
  }

  private int consumers(String queue) {
    return rabbit.execute(channel -> channel.queueDeclarePassive(queue)).getConsumerCount();
  }
}
