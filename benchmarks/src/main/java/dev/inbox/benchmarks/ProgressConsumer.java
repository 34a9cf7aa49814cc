package dev.inbox.benchmarks;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The adapter's own {@link KafkaConsumer}, passed in through its consumer factory, that watches the
 * loop from the inside: when the first records arrive and when the committed offsets of a fresh
 * topic (every partition starting at 0) add up to all its records. Only the loop thread calls it.
 */
class ProgressConsumer extends KafkaConsumer<byte[], byte[]> {
  private final long total;
  private final Map<TopicPartition, Long> committed = new HashMap<>();
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long firstRecordNanos;
  private volatile long doneNanos;

  ProgressConsumer(Map<String, Object> properties, long total) {
    super(properties);
    this.total = total;
  }

  @Override
  public ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
    ConsumerRecords<byte[], byte[]> records = super.poll(timeout);
    if (!records.isEmpty() && firstRecordNanos == 0) {
      firstRecordNanos = System.nanoTime();
    }
    return records;
  }

  @Override
  public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
    super.commitSync(offsets);
    offsets.forEach((partition, offset) -> committed.put(partition, offset.offset()));
    long sum = committed.values().stream().mapToLong(Long::longValue).sum();
    committed(sum);
    if (sum >= total && doneNanos == 0) {
      doneNanos = System.nanoTime();
      done.countDown();
    }
  }

  /** Called on the loop thread after each commit with the records committed so far. */
  void committed(long records) {}

  /** Waits until every record is committed; false on timeout. */
  boolean awaitDone(Duration timeout) throws InterruptedException {
    return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** From the first non-empty poll to the commit of the last record. */
  double seconds() {
    return (doneNanos - firstRecordNanos) / 1e9;
  }
}
