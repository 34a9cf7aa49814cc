package dev.inbox.kafka;

import java.time.Duration;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What processing one partition's records settled.
 *
 * @param partition the partition
 * @param commit the offset to commit (the next record to read), or null when nothing was settled
 * @param retryOffset the first record that must be read again, or -1 when every record settled
 * @param retryAfter how long to wait before reading it again (zero: at once)
 */
public record PartitionResult(
    TopicPartition partition, OffsetAndMetadata commit, long retryOffset, Duration retryAfter) {

  public boolean needsRetry() {
    return retryOffset >= 0;
  }
}
