package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestKafka;
import org.junit.jupiter.api.Test;

/**
 * Both Kafka variants must apply every distinct payment once with both handlers, or their figures
 * mean nothing.
 */
class KafkaScenarioTest {

  @Test
  void bothVariantsApplyEveryDistinctPaymentOnceFromARealBroker() throws Exception {
    Workload workload = new Workload(400, 0.2, 7);
    try (HikariDataSource dataSource = TestDataSources.pool(4);
        BenchmarkKafka kafka = BenchmarkKafka.open(TestKafka.shared().bootstrapServers())) {
      String topic = kafka.newTopic("bench-kafka-test", KafkaScenario.PARTITIONS);
      kafka.produce(topic, workload);
      KafkaScenario scenario =
          new KafkaScenario(dataSource, workload, kafka.bootstrapServers(), topic);
      for (boolean atOnce : new boolean[] {false, true}) {
        for (String variant : new String[] {"plain", "inbox", "inbox"}) {
          assertThat(scenario.run(variant, atOnce).correct())
              .as(variant + (atOnce ? " at once" : " per item"))
              .isTrue();
        }
      }
    }
  }
}
