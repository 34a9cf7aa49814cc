package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's own check must pass for both variants and both handlers, or its figures mean
 * nothing.
 */
class CoreScenarioTest {

  @Test
  void bothVariantsApplyEveryDistinctPaymentOnce() throws Exception {
    Workload workload = new Workload(600, 0.2, 7);
    assertThat(workload.messages).hasSize(600);
    assertThat(workload.distinct).isEqualTo(480);
    try (HikariDataSource dataSource = TestDataSources.pool(4)) {
      CoreScenario core = new CoreScenario(dataSource, workload);
      for (String variant : new String[] {"nodedup", "inbox"}) {
        for (int batchSize : new int[] {1, 50}) {
          for (boolean atOnce : new boolean[] {false, true}) {
            assertThat(core.run(variant, batchSize, atOnce).correct())
                .as(variant + " batch " + batchSize + (atOnce ? " at once" : " per item"))
                .isTrue();
          }
        }
      }
    }
  }
}
