package dev.inbox.spring;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.spring.internal.RabbitDeadLetters;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.amqp.core.AmqpTemplate;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.retry.MessageBatchRecoverer;
import org.springframework.amqp.rabbit.retry.RepublishMessageRecoverer;

/**
 * A {@link RepublishMessageRecoverer} that adds the inbox's {@link DeadLetterHeaders} and {@code
 * x-inbox-scope} (the queue) to a message the inbox is why of: its key gave up, mismatches or is
 * invalid ({@link DeliveryRejectedException}), or the listener threw a {@link
 * dev.inbox.NonRetryableException}. Other messages are republished as by its parent, with Spring's
 * {@code x-exception-*} headers, which every message keeps. {@code x-inbox-attempts} is an integer,
 * as the rabbit-adapter writes it. Declare it as the application's {@code MessageRecoverer} bean,
 * which Boot's listener retry hands exhausted messages to:
 *
 * <pre>{@code
 * @Bean
 * MessageRecoverer deadLetters(RabbitTemplate template, Inbox inbox) {
 *   return new InboxRepublishMessageRecoverer(template, "", "payments.dlq", inbox);
 * }
 * }</pre>
 *
 * <p>In {@code AcknowledgeMode.MANUAL}, where Spring AMQP's container acknowledges nothing, it
 * acknowledges each message it republished, once its template sent it (a failed send acknowledges
 * nothing and propagates): the inbox never gives a refused message to the listener, so none else
 * would, and it would come back when its channel closes and be dead-lettered a second time. A
 * message the listener failed on is acknowledged too, so a listener must acknowledge only after its
 * work has succeeded. It is also a {@link MessageBatchRecoverer}: of a consumer batch ({@code
 * consumerBatchEnabled}) it republishes only the messages the inbox refused, each with its own
 * headers (the new ones committed, the duplicates were settled), or, when the listener failed,
 * every message but the duplicates.
 */
public class InboxRepublishMessageRecoverer extends RepublishMessageRecoverer
    implements MessageBatchRecoverer {
  private final RabbitDeadLetters deadLetters;

  public InboxRepublishMessageRecoverer(
      AmqpTemplate template, String exchange, String routingKey, Inbox inbox) {
    super(template, exchange, routingKey);
    this.deadLetters = new RabbitDeadLetters(() -> inbox);
  }

  @Override
  public void recover(Message message, Throwable cause) {
    super.recover(message, cause);
    RabbitDeadLetters.acknowledgeRepublished(message);
  }

  @Override
  public void recover(List<Message> messages, Throwable cause) {
    for (RabbitDeadLetters.DeadLetter deadLetter : RabbitDeadLetters.ofBatch(messages, cause)) {
      recover(deadLetter.message(), deadLetter.cause());
    }
  }

  @Override
  protected Map<? extends String, ?> additionalHeaders(Message message, Throwable cause) {
    Map<String, Object> headers = new HashMap<>();
    Map<? extends String, ?> parent = super.additionalHeaders(message, cause);
    if (parent != null) {
      headers.putAll(parent);
    }
    headers.putAll(deadLetters.headers(message, cause));
    return headers;
  }
}
