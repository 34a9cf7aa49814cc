package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestRabbit;
import org.junit.jupiter.api.Test;

/**
 * Both RabbitMQ variants must apply every distinct payment once and leave the queue drained, with
 * both handlers.
 */
class RabbitScenarioTest {

  @Test
  void bothVariantsApplyEveryDistinctPaymentOnceFromARealBroker() throws Exception {
    Workload workload = new Workload(400, 0.2, 7);
    try (HikariDataSource dataSource = TestDataSources.pool(4);
        Connection connection = RabbitScenario.connect(TestRabbit.shared().uri())) {
      RabbitScenario scenario = new RabbitScenario(dataSource, workload, connection, 100);
      for (boolean atOnce : new boolean[] {false, true}) {
        for (String variant : new String[] {"plain", "inbox"}) {
          assertThat(scenario.run(variant, atOnce).correct())
              .as(variant + (atOnce ? " at once" : " per item"))
              .isTrue();
        }
      }
    }
  }
}
