package dev.inbox.kafka;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Disposition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Publishes dead letters with their original bytes and headers to a dead-letter topic (by default
 * {@code <topic>.DLT}), and waits for the broker's acknowledgement. Dead letters are delivered at
 * least once: a crash before the offset commit sends one again.
 *
 * <p>Added headers, all UTF-8 strings: the {@link DeadLetterHeaders} that the RabbitMQ adapter
 * writes too ({@value DeadLetterHeaders#REASON}, {@value DeadLetterHeaders#DETAIL}, {@value
 * DeadLetterHeaders#KEY}, {@value DeadLetterHeaders#ATTEMPTS}, {@value
 * DeadLetterHeaders#EXCEPTION_CLASS}, {@value DeadLetterHeaders#EXCEPTION_MESSAGE}), and {@value
 * #ORIGINAL_TOPIC}, {@value #ORIGINAL_PARTITION} and {@value #ORIGINAL_OFFSET}. For an
 * undeserializable record the exception is what the deserializer threw (a {@code
 * SerializationException}, a {@code StackOverflowError}).
 */
public final class KafkaDeadLetterPublisher implements DeadLetterSink<byte[], byte[]> {
  public static final String ORIGINAL_TOPIC = "x-inbox-original-topic";
  public static final String ORIGINAL_PARTITION = "x-inbox-original-partition";
  public static final String ORIGINAL_OFFSET = "x-inbox-original-offset";

  private final Producer<byte[], byte[]> producer;
  private final Function<String, String> topicNaming;
  private final Duration timeout;

  public KafkaDeadLetterPublisher(
      Producer<byte[], byte[]> producer, Function<String, String> topicNaming, Duration timeout) {
    this.producer = Objects.requireNonNull(producer, "producer");
    this.topicNaming = Objects.requireNonNull(topicNaming, "topicNaming");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
  }

  /** The default dead-letter topic of a topic: {@code <topic>.DLT}. */
  public static String defaultTopic(String topic) {
    return topic + ".DLT";
  }

  @Override
  public void publish(DeadLetter<byte[], byte[]> deadLetter) throws Exception {
    ConsumerRecord<byte[], byte[]> record = deadLetter.record();
    Disposition disposition = deadLetter.disposition();
    Headers headers = new RecordHeaders(record.headers().toArray());
    add(headers, ORIGINAL_TOPIC, record.topic());
    add(headers, ORIGINAL_PARTITION, Integer.toString(record.partition()));
    add(headers, ORIGINAL_OFFSET, Long.toString(record.offset()));
    add(headers, DeadLetterHeaders.KEY, disposition.key());
    add(headers, DeadLetterHeaders.REASON, disposition.reason().code());
    add(headers, DeadLetterHeaders.DETAIL, disposition.detail());
    add(headers, DeadLetterHeaders.ATTEMPTS, Integer.toString(disposition.attempts()));
    Throwable failure = disposition.failure();
    if (failure != null) {
      add(headers, DeadLetterHeaders.EXCEPTION_CLASS, failure.getClass().getName());
      add(headers, DeadLetterHeaders.EXCEPTION_MESSAGE, failure.getMessage());
    }
    ProducerRecord<byte[], byte[]> letter =
        new ProducerRecord<>(
            topicNaming.apply(record.topic()), null, record.key(), record.value(), headers);
    producer.send(letter).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Sets the header, replacing one of the same name; a null value leaves it out. */
  private static void add(Headers headers, String name, String value) {
    headers.remove(name);
    if (value != null) {
      headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }
  }
}
