package dev.inbox.rabbit;

import dev.inbox.testing.TestRabbit;
import dev.inbox.testing.acceptance.ConsumerAcceptanceSuite;
import dev.inbox.testing.acceptance.ConsumerFixture;
import javax.sql.DataSource;

/** The acceptance suite on a real RabbitMQ broker, through {@link RabbitFixture}. */
class RabbitAcceptanceTest extends ConsumerAcceptanceSuite {

  @Override
  protected ConsumerFixture fixture(DataSource dataSource, String schema) throws Exception {
    return new RabbitFixture(TestRabbit.shared(), dataSource, schema);
  }
}
