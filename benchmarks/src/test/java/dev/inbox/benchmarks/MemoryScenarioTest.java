package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import dev.inbox.testing.TestKafka;
import org.junit.jupiter.api.Test;

/** The child JVM consumes 400 records with a 256 MiB heap, reports its heap and is correct. */
class MemoryScenarioTest {

  @Test
  void childConsumerReportsItsHeapAndAppliesEveryDistinctPaymentOnce() throws Exception {
    Workload workload = new Workload(400, 0.2, 7);
    try (HikariDataSource dataSource = TestDataSources.pool(4);
        BenchmarkKafka kafka = BenchmarkKafka.open(TestKafka.shared().bootstrapServers())) {
      String topic = kafka.newTopic("bench-memory-test", KafkaScenario.PARTITIONS);
      kafka.produce(topic, workload);
      MemoryScenario.Result result =
          new MemoryScenario(dataSource, workload, jdbcUrlWithCredentials())
              .run(kafka.bootstrapServers(), topic);
      assertThat(result.oom()).isFalse();
      assertThat(result.correct()).isTrue();
      assertThat(result.samples()).hasSizeGreaterThan(1);
      assertThat(result.samples().get(result.samples().size() - 1)[0]).isEqualTo(400);
    }
  }

  /** The child JVM gets only a URL, so the test database's credentials go into it. */
  private static String jdbcUrlWithCredentials() {
    TestDatabase db = TestDatabase.shared();
    StringBuilder url = new StringBuilder(db.jdbcUrl());
    char separator = db.jdbcUrl().contains("?") ? '&' : '?';
    if (db.user() != null) {
      url.append(separator).append("user=").append(db.user());
      separator = '&';
    }
    if (db.password() != null) {
      url.append(separator).append("password=").append(db.password());
    }
    return url.toString();
  }
}
