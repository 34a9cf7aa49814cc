package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
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
import org.springframework.transaction.annotation.Transactional;

/**
 * A consumer-batch {@code @RabbitListener} in AUTO ack mode whose recoverer dead-letters the first
 * refused message of a batch and then fails on the second: the dead-letter queue takes one message
 * at a time ({@code x-max-length} 1, {@code reject-publish}), and publisher confirms make the
 * refusal an exception. The container requeues the batch; the first message, dead-lettered once
 * already, must not come back to be dead-lettered again.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RabbitBatchAutoAckDeadLetterTest.Topology.class,
      RabbitBatchAutoAckDeadLetterTest.BatchListener.class
    },
    properties = {
      "inbox.schema=boot_rabbit_batch_auto_dead",
      "spring.rabbitmq.publisher-confirm-type=correlated",
      "spring.rabbitmq.publisher-returns=true",
      "spring.rabbitmq.listener.simple.acknowledge-mode=auto",
      "spring.rabbitmq.listener.simple.consumer-batch-enabled=true",
      "spring.rabbitmq.listener.simple.batch-size=10",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms"
    })
class RabbitBatchAutoAckDeadLetterTest {
  private static final String QUEUE = TestRabbit.newQueueName("boot-batch-auto");
  private static final String DEAD_LETTERS = TestRabbit.newQueueName("boot-batch-auto-dead");
  private static final String CONTAINER = "boot-batch-auto";

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.batch-auto", () -> QUEUE);
    registry.add("test.queue.batch-auto-dead", () -> DEAD_LETTERS);
  }

  @Configuration(proxyBeanMethods = false)
  static class Topology {
    @Bean
    Queue batchAuto(@Value("${test.queue.batch-auto}") String name) {
      return QueueBuilder.nonDurable(name).expires(600_000).build();
    }

    /** Holds one dead letter at a time and refuses (nacks) the next while it is full. */
    @Bean
    Queue batchAutoDeadLetters(@Value("${test.queue.batch-auto-dead}") String name) {
      return QueueBuilder.nonDurable(name)
          .expires(600_000)
          .maxLength(1)
          .overflow(QueueBuilder.Overflow.rejectPublish)
          .build();
    }

    @Bean
    MessageRecoverer republishToDeadLetters(
        RabbitTemplate template, Inbox inbox, @Value("${test.queue.batch-auto-dead}") String name) {
      return new InboxRepublishMessageRecoverer(template, "", name, inbox);
    }
  }

  /** Never given a message here: every message of the test has no key. */
  @Component
  static class BatchListener {
    @Transactional
    @RabbitListener(id = CONTAINER, queues = "${test.queue.batch-auto}", autoStartup = "false")
    public void onBatch(List<Message> batch) {}
  }

  @Autowired RabbitTemplate rabbit;
  @Autowired RabbitListenerEndpointRegistry registry;

  @Test
  void a_dead_letter_sent_before_a_later_one_of_its_batch_failed_is_not_sent_again()
      throws Exception {
    // No messageId and no idempotency-key header: refused as invalid, without a claim.
    for (String body : List.of("keyless-1", "keyless-2")) {
      rabbit.send(
          "", QUEUE, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));
    }
    MessageListenerContainer container = registry.getListenerContainer(CONTAINER);
    container.start();

    // Takes one letter a second off the dead-letter queue (basic.get, never a consumer, which
    // would empty it before the recoverer's next letter), so that the recoverer's sends of the
    // requeued batch get through one by one.
    Map<String, Integer> letters = new HashMap<>();
    long deadline = System.nanoTime() + 30_000_000_000L;
    long settledAt = Long.MAX_VALUE;
    while (System.nanoTime() < Math.min(deadline, settledAt)) {
      Thread.sleep(1000);
      Message letter = rabbit.receive(DEAD_LETTERS);
      if (letter != null) {
        letters.merge(new String(letter.getBody(), StandardCharsets.UTF_8), 1, Integer::sum);
      }
      if (letters.size() == 2 && settledAt == Long.MAX_VALUE) {
        // Both arrived: a few more seconds for any second copy.
        settledAt = System.nanoTime() + 3_000_000_000L;
      }
    }
    container.stop();

    assertThat(letters)
        .as("dead letters by body")
        .containsEntry("keyless-1", 1)
        .containsEntry("keyless-2", 1);
    assertThat(RabbitMessages.ready(rabbit, QUEUE)).as("messages left on the queue").isZero();
  }
}
