package dev.inbox.spring;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.spring.internal.RabbitDeadLetters;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.AmqpMessageReturnedException;
import org.springframework.amqp.core.AmqpTemplate;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.AmqpNackReceivedException;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
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
 *
 * <p>Since the original is acknowledged once its dead letter is sent, a dead letter the broker
 * drops (a routing key no queue is bound to, a missing exchange) would be lost. When the template's
 * connection factory has publisher confirms ({@code
 * spring.rabbitmq.publisher-confirm-type=correlated}), each dead letter waits for its confirm (at
 * most {@link #setConfirmTimeout}), and a negative one, a return (with {@code
 * spring.rabbitmq.publisher-returns=true}, which makes Boot's template mandatory) or none in time
 * throws, as Spring's {@code RepublishMessageRecovererWithConfirms} does: nothing is acknowledged,
 * and the message is requeued and delivered again (see {@link #recover(Message, Throwable)}), also
 * in MANUAL mode and with {@code default-requeue-rejected=false}. A dead-letter destination that
 * refuses every dead letter therefore keeps its messages cycling through the listener until it is
 * fixed, each try logged, rather than losing them. Without confirms it logs a warning once, at
 * construction.
 */
public class InboxRepublishMessageRecoverer extends RepublishMessageRecoverer
    implements MessageBatchRecoverer {
  private static final Logger log = LoggerFactory.getLogger(InboxRepublishMessageRecoverer.class);

  private final RabbitDeadLetters deadLetters;
  private final RabbitTemplate confirmingTemplate;
  private Duration confirmTimeout = Duration.ofSeconds(10);

  public InboxRepublishMessageRecoverer(
      AmqpTemplate template, String exchange, String routingKey, Inbox inbox) {
    super(template, exchange, routingKey);
    this.deadLetters = new RabbitDeadLetters(() -> inbox);
    this.confirmingTemplate =
        template instanceof RabbitTemplate rabbit
                && rabbit.getConnectionFactory() != null
                && rabbit.getConnectionFactory().isPublisherConfirms()
            ? rabbit
            : null;
    if (confirmingTemplate == null) {
      log.warn(
          "dead letters to {} are sent without publisher confirms, so one the broker drops (no"
              + " queue bound to its routing key, a missing exchange) is lost with the original,"
              + " which is acknowledged; set spring.rabbitmq.publisher-confirm-type=correlated and"
              + " spring.rabbitmq.publisher-returns=true",
          routingKey);
    } else if (!confirmingTemplate.getConnectionFactory().isPublisherReturns()
        || !Boolean.TRUE.equals(confirmingTemplate.isMandatoryFor(new Message(new byte[0])))) {
      // The broker returns an unroutable message only when it is published mandatory, and the
      // template hears of it only with returns on: without both it is confirmed and dropped.
      log.warn(
          "dead letters to {} wait for publisher confirms, but without returns on a mandatory"
              + " template one that no queue is bound for is confirmed and dropped; set"
              + " spring.rabbitmq.publisher-returns=true (Boot's template is then mandatory) or"
              + " make the template mandatory",
          routingKey);
    }
  }

  /** How long a dead letter waits for its publisher confirm, when the template has them. */
  public void setConfirmTimeout(Duration confirmTimeout) {
    if (confirmTimeout == null || confirmTimeout.isNegative() || confirmTimeout.isZero()) {
      throw new IllegalArgumentException(
          "confirmTimeout must be positive, but was " + confirmTimeout);
    }
    this.confirmTimeout = confirmTimeout;
  }

  @Override
  protected void doSend(String exchange, String routingKey, Message message) {
    if (confirmingTemplate == null) {
      super.doSend(exchange, routingKey, message);
      return;
    }
    CorrelationData correlation = new CorrelationData();
    if (exchange == null) {
      confirmingTemplate.send(routingKey, message, correlation);
    } else {
      confirmingTemplate.send(exchange, routingKey, message, correlation);
    }
    CorrelationData.Confirm confirm;
    try {
      confirm = correlation.getFuture().get(confirmTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AmqpException("interrupted waiting for the dead letter's publisher confirm", e);
    } catch (ExecutionException e) {
      throw new AmqpException("the dead letter's publisher confirm failed", e.getCause());
    } catch (TimeoutException e) {
      throw new AmqpTimeoutException(
          "no publisher confirm of the dead letter to " + routingKey + " within " + confirmTimeout,
          e);
    }
    if (correlation.getReturned() != null) {
      throw new AmqpMessageReturnedException(
          "the broker returned the dead letter to "
              + routingKey
              + " as unroutable: "
              + correlation.getReturned().getReplyText(),
          correlation.getReturned());
    }
    if (!confirm.isAck()) {
      throw new AmqpNackReceivedException(
          "the broker refused the dead letter to " + routingKey + ": " + confirm.getReason(),
          message);
    }
  }

  /**
   * Republishes the message and acknowledges it in MANUAL mode. A dead letter that could not be
   * sent throws an {@link ImmediateRequeueAmqpException}, so that the container requeues the
   * message even with {@code default-requeue-rejected=false} (which would drop it, or hand it to a
   * broker-side dead-letter exchange without the inbox's headers); in MANUAL mode, where the
   * container settles nothing, the message is requeued here.
   */
  @Override
  public void recover(Message message, Throwable cause) {
    try {
      super.recover(message, cause);
    } catch (RuntimeException e) {
      RabbitDeadLetters.requeueUnrepublished(message);
      throw e instanceof ImmediateRequeueAmqpException requeue
          ? requeue
          : new ImmediateRequeueAmqpException(
              "the dead letter of a message could not be sent, so the message is requeued: "
                  + e.getMessage(),
              e);
    }
    RabbitDeadLetters.acknowledgeRepublished(message);
  }

  /**
   * Dead-letters the batch's messages one by one; when one fails, it and those after it are
   * requeued (in MANUAL mode by this recoverer, else by the container, which in AUTO mode requeues
   * the whole batch). The messages whose dead letters were sent before it are acknowledged first,
   * also in AUTO mode, so that the requeued batch does not bring them back to be dead-lettered a
   * second time; one whose acknowledgement fails comes back and is dead-lettered again: a duplicate
   * dead letter, never a lost message.
   */
  @Override
  public void recover(List<Message> messages, Throwable cause) {
    List<RabbitDeadLetters.DeadLetter> deadLetters = RabbitDeadLetters.ofBatch(messages, cause);
    for (int i = 0; i < deadLetters.size(); i++) {
      try {
        recover(deadLetters.get(i).message(), deadLetters.get(i).cause());
      } catch (RuntimeException e) {
        for (RabbitDeadLetters.DeadLetter sent : deadLetters.subList(0, i)) {
          try {
            RabbitDeadLetters.acknowledgeRepublishedBeforeFailure(sent.message());
          } catch (RuntimeException ackFailure) {
            e.addSuppressed(ackFailure);
          }
        }
        for (RabbitDeadLetters.DeadLetter rest : deadLetters.subList(i + 1, deadLetters.size())) {
          RabbitDeadLetters.requeueUnrepublished(rest.message());
        }
        throw e;
      }
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
