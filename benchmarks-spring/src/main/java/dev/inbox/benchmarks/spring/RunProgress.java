package dev.inbox.benchmarks.spring;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One run's clock, seen from inside the container's consumer: it starts when the first records come
 * out of a poll and stops when the committed offsets of the fresh topic (every partition starting
 * at 0) add up to all of its records, so that joining the group is not counted.
 *
 * <p>Kafka instantiates consumer interceptors itself; {@link Interceptor} finds this object in the
 * consumer's configuration under {@link #CONFIG}, where the benchmark's consumer factory put it.
 */
final class RunProgress {
  static final String CONFIG = "inbox.benchmark.progress";

  private final long total;
  private final Map<TopicPartition, Long> committed = new HashMap<>();
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long firstRecordNanos;
  private volatile long doneNanos;

  RunProgress(long total) {
    this.total = total;
  }

  private void consumed(int records) {
    if (records > 0 && firstRecordNanos == 0) {
      firstRecordNanos = System.nanoTime();
    }
  }

  private synchronized void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
    offsets.forEach((partition, offset) -> committed.put(partition, offset.offset()));
    long sum = committed.values().stream().mapToLong(Long::longValue).sum();
    if (sum >= total && doneNanos == 0) {
      doneNanos = System.nanoTime();
      done.countDown();
    }
  }

  /** Waits until every record is committed; false on timeout. */
  boolean awaitDone(Duration timeout) throws InterruptedException {
    return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** From the first records polled to the commit of the last offset. */
  double seconds() {
    return (doneNanos - firstRecordNanos) / 1e9;
  }

  /** Reports the consumer's polls and successful commits to the run's {@link RunProgress}. */
  public static final class Interceptor implements ConsumerInterceptor<Object, Object> {
    private RunProgress progress;

    @Override
    public void configure(Map<String, ?> configs) {
      progress = (RunProgress) configs.get(CONFIG);
      if (progress == null) {
        throw new IllegalStateException(
            "no " + CONFIG + " in the consumer's configuration, which indicates a bug");
      }
    }

    @Override
    public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
      progress.consumed(records.count());
      return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
      progress.committed(offsets);
    }

    @Override
    public void close() {}
  }
}
