package dev.inbox.examples.spring;

import dev.inbox.Inbox;
import dev.inbox.http.ScopeResolver;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The service's topology and error handling, as a Spring team would write it: the topic and the
 * queues are declared at startup, a payment that keeps failing goes to a dead-letter topic or queue
 * once the inbox gives up on it ({@code inbox.max-attempts}), and the endpoint shares the
 * listeners' key space.
 */
@Configuration(proxyBeanMethods = false)
public class PaymentsConfiguration {
  /** The name of the endpoint's {@link ScopeResolver} bean. */
  static final String SCOPE_RESOLVER = "paymentsScope";

  @Bean
  NewTopic paymentsTopic(PaymentsProperties properties) {
    return TopicBuilder.name(properties.name()).partitions(4).build();
  }

  @Bean
  Queue paymentsQueue(PaymentsProperties properties) {
    return new Queue(properties.name());
  }

  @Bean
  Queue paymentsDeadLetterQueue(PaymentsProperties properties) {
    return new Queue(properties.deadLetterQueue());
  }

  /** The scope the listeners claim their keys in: their consumer group, their queue. */
  @Bean(SCOPE_RESOLVER)
  ScopeResolver paymentsScope(PaymentsProperties properties) {
    return ScopeResolver.global(properties.name());
  }

  /**
   * Retries a failing record more often than the inbox allows attempts, so that the inbox decides
   * when it is given up; then publishes it to {@code <topic>.DLT}.
   */
  @Bean
  DefaultErrorHandler kafkaErrorHandler(KafkaTemplate<Object, Object> template) {
    return new DefaultErrorHandler(
        new DeadLetterPublishingRecoverer(
            template, (record, failure) -> new TopicPartition(record.topic() + ".DLT", -1)),
        new FixedBackOff(100L, 20L));
  }

  /**
   * With Boot's listener retry ({@code spring.rabbitmq.listener.simple.retry}), the last step:
   * republishes to {@code <name>.dlq} with the inbox's {@code x-inbox-*} headers, and, since
   * application.yml turns on publisher confirms and returns, acknowledges nothing the broker did
   * not take.
   */
  @Bean
  MessageRecoverer rabbitRecoverer(
      RabbitTemplate template, PaymentsProperties properties, Inbox inbox) {
    return new InboxRepublishMessageRecoverer(template, "", properties.deadLetterQueue(), inbox);
  }
}
