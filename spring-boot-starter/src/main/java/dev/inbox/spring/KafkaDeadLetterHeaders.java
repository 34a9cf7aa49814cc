package dev.inbox.spring;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.kafka.KeyExtractor;
import dev.inbox.spring.internal.DeadLetterCause;
import java.nio.charset.StandardCharsets;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.ListenerExecutionFailedException;

/**
 * The inbox's {@link DeadLetterHeaders} (and {@code x-inbox-scope}, the consumer group) on a record
 * that a {@link DeadLetterPublishingRecoverer} publishes because of the inbox: its key gave up,
 * mismatches or is invalid ({@link DeliveryRejectedException}), or the listener threw a {@link
 * dev.inbox.NonRetryableException}. Other dead letters get none. Values are UTF-8 text, as the
 * kafka-adapter writes them ({@code x-inbox-attempts} = {@code 3}).
 *
 * <p>The starter declares one (bean {@code inboxKafkaDeadLetterHeaders}, unless the application
 * declares its own) and adds it to every {@code DeadLetterPublishingRecoverer} bean with {@link
 * DeadLetterPublishingRecoverer#addHeadersFunction}; a recoverer built inside another bean needs
 * {@code recoverer.addHeadersFunction(inboxKafkaDeadLetterHeaders)}. The headers Spring Kafka adds
 * itself ({@code kafka_dlt-*}) stay.
 */
public final class KafkaDeadLetterHeaders
    implements BiFunction<ConsumerRecord<?, ?>, Exception, Headers> {
  private final DeadLetterCause causes;
  private final KeyExtractor<Object, Object> keys;

  /**
   * @param inbox the inbox, asked for the attempts of a key whose listener threw
   *     NonRetryableException
   * @param keys the extractor the listeners' keys come from
   */
  public KafkaDeadLetterHeaders(Supplier<Inbox> inbox, KeyExtractor<Object, Object> keys) {
    this.causes = new DeadLetterCause(inbox);
    this.keys = keys;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Headers apply(ConsumerRecord<?, ?> record, Exception failure) {
    RecordHeaders headers = new RecordHeaders();
    causes
        .headers(
            failure, () -> groupOf(failure), () -> keyOf((ConsumerRecord<Object, Object>) record))
        .forEach(
            (name, value) ->
                headers.add(name, String.valueOf(value).getBytes(StandardCharsets.UTF_8)));
    return headers;
  }

  private static String groupOf(Exception failure) {
    ListenerExecutionFailedException listener =
        DeadLetterCause.find(failure, ListenerExecutionFailedException.class);
    return listener == null ? null : listener.getGroupId();
  }

  private String keyOf(ConsumerRecord<Object, Object> record) {
    try {
      return keys.keyOf(record);
    } catch (Exception e) {
      return null;
    }
  }
}
