package dev.inbox.spring.internal;

import dev.inbox.kafka.KeyExtractor;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.springframework.kafka.listener.BatchInterceptor;
import org.springframework.kafka.listener.RecordInterceptor;

/**
 * Tells the inbox which records a Spring Kafka container is about to hand to its listener on this
 * thread ({@link CurrentDelivery}), and forgets them afterwards. It changes no record. Installed in
 * every listener container factory ahead of the application's own interceptors.
 */
public final class KafkaDeliveryInterceptor
    implements RecordInterceptor<Object, Object>, BatchInterceptor<Object, Object> {
  private final KeyExtractor<Object, Object> keys;

  public KafkaDeliveryInterceptor(KeyExtractor<Object, Object> keys) {
    this.keys = keys;
  }

  @Override
  public ConsumerRecord<Object, Object> intercept(
      ConsumerRecord<Object, Object> record, Consumer<Object, Object> consumer) {
    CurrentDelivery.set(new KafkaDelivery(scope(consumer), List.of(record), keys, false));
    return record;
  }

  @Override
  public void afterRecord(
      ConsumerRecord<Object, Object> record, Consumer<Object, Object> consumer) {
    CurrentDelivery.clear();
  }

  @Override
  public ConsumerRecords<Object, Object> intercept(
      ConsumerRecords<Object, Object> records, Consumer<Object, Object> consumer) {
    List<ConsumerRecord<Object, Object>> list = new ArrayList<>(records.count());
    records.forEach(list::add);
    CurrentDelivery.set(new KafkaDelivery(scope(consumer), list, keys, true));
    return records;
  }

  @Override
  public void success(ConsumerRecords<Object, Object> records, Consumer<Object, Object> consumer) {
    CurrentDelivery.clear();
  }

  @Override
  public void failure(
      ConsumerRecords<Object, Object> records,
      Exception exception,
      Consumer<Object, Object> consumer) {
    CurrentDelivery.clear();
  }

  private static String scope(Consumer<Object, Object> consumer) {
    String group = consumer.groupMetadata().groupId();
    if (group == null || group.isBlank()) {
      throw new IllegalStateException(
          "the inbox's scope for a @KafkaListener is its consumer group, and this consumer has"
              + " none: set spring.kafka.consumer.group-id or the listener's groupId");
    }
    return group;
  }
}
