package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import org.junit.jupiter.api.Test;

/**
 * 16 clients post 160 payments three times (no filter, first, replay): every answer is a 201, only
 * the replays say so, and each path applied every payment exactly once.
 */
class HttpScenarioTest {

  @Test
  void everyVariantAnswersAsExpectedAndAppliesEveryPaymentOnce() throws Exception {
    Workload workload = new Workload(200, 0.2, 7);
    try (HikariDataSource dataSource = TestDataSources.pool(HttpScenario.POOL_SIZE)) {
      HttpScenario.Latencies latencies = new HttpScenario(dataSource, workload).run();
      assertThat(latencies.correct()).isTrue();
      assertThat(latencies.nanos()).hasSize(3).allSatisfy(n -> assertThat(n).hasSize(160));
      // Linux: each variant's turns kept the machine busy for some time; elsewhere all unknown.
      if (MachineCpu.available()) {
        assertThat(latencies.cpuMicros()).hasSize(3);
        for (long cpu : latencies.cpuMicros()) {
          assertThat(cpu).isPositive();
        }
      } else {
        assertThat(latencies.cpuMicros()).containsOnly(-1L);
      }
    }
  }
}
