package dev.inbox.examples.spring;

import dev.inbox.InboxKeys;
import dev.inbox.InvalidKeyException;
import dev.inbox.NonRetryableException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Kafka and RabbitMQ doors: plain Spring listeners. The starter claims each message's key in
 * the method's transaction before the method runs (a duplicate never reaches it) and completes it
 * just before the commit; the method only writes.
 */
@Component
public class PaymentListeners {
  /** The Kafka header, and the AMQP header when there is no messageId, that carries the key. */
  static final String KEY_HEADER = "idempotency-key";

  private final Payments payments;
  private final JsonMapper json;

  public PaymentListeners(Payments payments, JsonMapper json) {
    this.payments = payments;
    this.json = json;
  }

  /** A record's key is its {@value #KEY_HEADER} header, as the inbox reads it. */
  @Transactional
  @KafkaListener(
      topics = "${payments.name}",
      groupId = "${payments.name}",
      concurrency = "${payments.kafka-concurrency:2}")
  public void onKafka(ConsumerRecord<String, String> record) {
    Header key = record.headers().lastHeader(KEY_HEADER);
    if (key == null) {
      throw new NonRetryableException("a payment record needs an '" + KEY_HEADER + "' header");
    }
    String id = paymentId(new String(key.value(), StandardCharsets.UTF_8));
    payments.apply(id, parse(record.value().getBytes(StandardCharsets.UTF_8)), "kafka");
  }

  /** A message's key is its messageId, else its {@value #KEY_HEADER} header. */
  @Transactional
  @RabbitListener(queues = "${payments.name}")
  public void onRabbit(Message message) {
    String id = message.getMessageProperties().getMessageId();
    if (id == null) {
      Object header = message.getMessageProperties().getHeader(KEY_HEADER);
      if (header == null) {
        throw new NonRetryableException("a payment message needs a messageId");
      }
      id = paymentId(header.toString());
    }
    payments.apply(id, parse(message.getBody()), "rabbitmq");
  }

  private static String paymentId(String header) {
    try {
      return InboxKeys.fromIdempotencyKeyHeader(header);
    } catch (InvalidKeyException e) {
      throw new NonRetryableException(e.getMessage(), e);
    }
  }

  private PaymentRequest parse(byte[] body) {
    PaymentRequest payment;
    try {
      payment = json.readValue(body, PaymentRequest.class);
    } catch (JacksonException e) {
      throw new NonRetryableException("payment body is not valid: " + e.getOriginalMessage(), e);
    }
    String rule = payment.brokenRule();
    if (rule != null) {
      throw new NonRetryableException(rule);
    }
    return payment;
  }
}
