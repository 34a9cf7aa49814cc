package dev.inbox.kafka;

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
 * <p>Added headers: {@value #ORIGINAL_TOPIC}, {@value #ORIGINAL_PARTITION}, {@value
 * #ORIGINAL_OFFSET}, {@value #KEY}, {@value #REASON}, {@value #EXCEPTION_CLASS}, {@value
 * #EXCEPTION_MESSAGE} and {@value #ATTEMPTS}, all UTF-8 strings. For an undeserializable record the
 * exception class is what the deserializer threw (a {@code SerializationException}, a {@code
 * StackOverflowError}). The reason is a {@link DeadLetterReason#code()}: {@code invalid_key},
 * {@code undeserializable}, {@code mismatch}, {@code gave_up} or {@code non_retryable}.
 */
public final class KafkaDeadLetterPublisher implements DeadLetterSink<byte[], byte[]> {
  public static final String ORIGINAL_TOPIC = "inbox-dlt-original-topic";
  public static final String ORIGINAL_PARTITION = "inbox-dlt-original-partition";
  public static final String ORIGINAL_OFFSET = "inbox-dlt-original-offset";
  public static final String KEY = "inbox-dlt-key";
  public static final String REASON = "inbox-dlt-reason";
  public static final String EXCEPTION_CLASS = "inbox-dlt-exception-class";
  public static final String EXCEPTION_MESSAGE = "inbox-dlt-exception-message";
  public static final String ATTEMPTS = "inbox-dlt-attempts";

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
    Headers headers = new RecordHeaders(record.headers().toArray());
    add(headers, ORIGINAL_TOPIC, record.topic());
    add(headers, ORIGINAL_PARTITION, Integer.toString(record.partition()));
    add(headers, ORIGINAL_OFFSET, Long.toString(record.offset()));
    if (deadLetter.key() != null) {
      add(headers, KEY, deadLetter.key());
    }
    add(headers, REASON, deadLetter.reason().code());
    if (deadLetter.failure() != null) {
      add(headers, EXCEPTION_CLASS, thrown(deadLetter.failure()).getClass().getName());
    }
    add(headers, EXCEPTION_MESSAGE, deadLetter.description());
    add(headers, ATTEMPTS, Integer.toString(deadLetter.attempts()));
    ProducerRecord<byte[], byte[]> letter =
        new ProducerRecord<>(
            topicNaming.apply(record.topic()), null, record.key(), record.value(), headers);
    producer.send(letter).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * What the user's code threw: for a record that could not be deserialized, the deserializer's
   * exception or error rather than the adapter's wrapper of it.
   */
  private static Throwable thrown(Throwable failure) {
    return failure instanceof UndeserializableRecordException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }

  private static void add(Headers headers, String name, String value) {
    headers.remove(name);
    headers.add(name, value.getBytes(StandardCharsets.UTF_8));
  }
}
