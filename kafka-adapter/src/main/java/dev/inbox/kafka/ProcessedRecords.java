package dev.inbox.kafka;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The outcome of {@link InboxRecordProcessor#process}: the database work is committed; commit
 * {@link #offsetsToCommit()} next, then seek every partition of {@link #retries()} back to its
 * retry offset.
 */
public record ProcessedRecords(List<PartitionResult> partitions) {
  public ProcessedRecords {
    partitions = List.copyOf(partitions);
  }

  /** Exactly the offsets whose records took effect, were duplicates or were dead-lettered. */
  public Map<TopicPartition, OffsetAndMetadata> offsetsToCommit() {
    Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
    for (PartitionResult result : partitions) {
      if (result.commit() != null) {
        offsets.put(result.partition(), result.commit());
      }
    }
    return offsets;
  }

  /** The partitions with a record to read again. */
  public List<PartitionResult> retries() {
    return partitions.stream().filter(PartitionResult::needsRetry).toList();
  }
}
