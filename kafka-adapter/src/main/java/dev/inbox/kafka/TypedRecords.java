package dev.inbox.kafka;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Deserializes the raw records of one poll with the user's deserializers, once per record. The loop
 * reads bytes so that a record that cannot be deserialized is dead-lettered with its original
 * bytes, instead of failing the poll.
 */
final class TypedRecords<K, V> {
  private final Deserializer<K> keyDeserializer;
  private final Deserializer<V> valueDeserializer;
  private final Map<ConsumerRecord<byte[], byte[]>, ConsumerRecord<K, V>> typed =
      new IdentityHashMap<>();

  TypedRecords(Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
    this.keyDeserializer = keyDeserializer;
    this.valueDeserializer = valueDeserializer;
  }

  /** Forgets the previous poll's records. */
  void clear() {
    typed.clear();
  }

  ConsumerRecord<K, V> of(ConsumerRecord<byte[], byte[]> raw) {
    ConsumerRecord<K, V> record = typed.get(raw);
    if (record == null) {
      record = deserialize(raw);
      typed.put(raw, record);
    }
    return record;
  }

  List<ConsumerRecord<K, V>> of(List<ConsumerRecord<byte[], byte[]>> raws) {
    List<ConsumerRecord<K, V>> records = new ArrayList<>(raws.size());
    for (ConsumerRecord<byte[], byte[]> raw : raws) {
      records.add(of(raw));
    }
    return records;
  }

  /**
   * Deserializes the record, or throws {@link UndeserializableRecordException} for anything a
   * deserializer throws, an {@link Error} included: a {@code StackOverflowError} on one deeply
   * nested value is that record's problem, and would stop every member of the group in turn if it
   * stopped the loop.
   */
  private ConsumerRecord<K, V> deserialize(ConsumerRecord<byte[], byte[]> raw) {
    K key;
    V value;
    try {
      key = keyDeserializer.deserialize(raw.topic(), raw.headers(), raw.key());
    } catch (Throwable e) {
      throw new UndeserializableRecordException("cannot deserialize the key: " + describe(e), e);
    }
    try {
      value = valueDeserializer.deserialize(raw.topic(), raw.headers(), raw.value());
    } catch (Throwable e) {
      throw new UndeserializableRecordException("cannot deserialize the value: " + describe(e), e);
    }
    return new ConsumerRecord<>(
        raw.topic(),
        raw.partition(),
        raw.offset(),
        raw.timestamp(),
        raw.timestampType(),
        raw.serializedKeySize(),
        raw.serializedValueSize(),
        key,
        value,
        raw.headers(),
        raw.leaderEpoch());
  }

  private static String describe(Throwable e) {
    return e.getMessage() == null ? e.getClass().getName() : e.getMessage();
  }
}
