package dev.inbox.examples.spring;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/** How far a consumer group has got through a topic, as the broker knows it. */
final class ConsumerGroups {
  private ConsumerGroups() {}

  /**
   * Whether {@code group} has committed past the last record of every partition of {@code topic}:
   * each record was applied, or acknowledged as a duplicate.
   */
  static boolean caughtUp(Admin admin, String group, String topic)
      throws ExecutionException, InterruptedException {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    admin
        .describeTopics(List.of(topic))
        .allTopicNames()
        .get()
        .get(topic)
        .partitions()
        .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
    Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(latest).all().get();
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    return ends.entrySet().stream()
        .allMatch(
            end -> {
              OffsetAndMetadata done = committed.get(end.getKey());
              return end.getValue().offset() == 0
                  || (done != null && done.offset() >= end.getValue().offset());
            });
  }
}
