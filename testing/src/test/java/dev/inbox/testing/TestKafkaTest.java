package dev.inbox.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class TestKafkaTest {
  private static final int ROUNDS = 10;
  private static final int RECORDS = 3_000;
  private static final int PARTITIONS = 4;

  /**
   * The broker runs in a JVM of its own: its classes are not on this JVM's class path, so the
   * kafka-clients here are the only Kafka code the tests run on, whichever version a build tests.
   */
  @Test
  void the_broker_answers_from_another_jvm_whose_classes_this_jvm_does_not_have() throws Exception {
    String bootstrap = TestKafka.shared().bootstrapServers();
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      assertThat(admin.describeCluster().nodes().get()).hasSize(1);
    }
    assertThatThrownBy(() -> Class.forName("kafka.Kafka"))
        .isInstanceOf(ClassNotFoundException.class);
    assertThatThrownBy(() -> Class.forName("kafka.server.KafkaRaftServer"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  /**
   * Sends right after creating each topic, without waiting for its leaders, in many small batches,
   * so that the first batches meet NOT_LEADER_OR_FOLLOWER while later ones are in flight. With the
   * client's default of five requests in flight, under CPU load, the retried first batches were
   * refused as OUT_OF_ORDER_SEQUENCE_NUMBER until they expired (KAFKA-14359; 9 642 of 45 000
   * records lost in one run).
   */
  @Test
  void the_test_producer_delivers_every_record_once_to_a_topic_whose_leaders_are_just_elected()
      throws Exception {
    String bootstrap = TestKafka.shared().bootstrapServers();
    Map<String, Object> config = new HashMap<>(TestKafka.producerConfig(bootstrap));
    config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    config.put(ProducerConfig.BATCH_SIZE_CONFIG, 100);
    // Quick retries and a short delivery timeout: a stuck batch fails the round in 30 s, not 120.
    config.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
    config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      for (int round = 0; round < ROUNDS; round++) {
        String topic = "leaders-" + UUID.randomUUID().toString().substring(0, 8);
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        List<String> failures = new ArrayList<>();
        try (KafkaProducer<String, String> producer =
            new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
          List<Future<RecordMetadata>> acks = new ArrayList<>();
          for (int i = 0; i < RECORDS; i++) {
            acks.add(producer.send(new ProducerRecord<>(topic, Integer.toString(i), "v" + i)));
          }
          for (Future<RecordMetadata> ack : acks) {
            try {
              ack.get();
            } catch (ExecutionException e) {
              failures.add(e.getCause().toString());
            }
          }
        }
        assertThat(failures).as("round %d", round).isEmpty();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
          latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        long written =
            admin.listOffsets(latest).all().get().values().stream()
                .mapToLong(offset -> offset.offset())
                .sum();
        assertThat(written).as("records in topic %s", topic).isEqualTo(RECORDS);
        admin.deleteTopics(List.of(topic)).all().get();
      }
    }
  }
}
