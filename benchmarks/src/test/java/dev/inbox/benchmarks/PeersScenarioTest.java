package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import org.junit.jupiter.api.Test;

/** Every peer must apply each distinct payment once, or the comparison means nothing. */
class PeersScenarioTest {

  @Test
  void everyPeerAppliesEveryDistinctPaymentOnce() throws Exception {
    Workload workload = new Workload(300, 0.2, 11);
    try (HikariDataSource dataSource = TestDataSources.pool(4)) {
      PeersScenario peers = new PeersScenario(dataSource, workload);
      for (String peer : PeersScenario.PEERS.keySet()) {
        assertThat(peers.run(peer).correct()).as(peer).isTrue();
      }
    }
  }
}
