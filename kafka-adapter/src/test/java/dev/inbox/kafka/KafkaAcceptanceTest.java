package dev.inbox.kafka;

import dev.inbox.testing.TestKafka;
import dev.inbox.testing.acceptance.ConsumerAcceptanceSuite;
import dev.inbox.testing.acceptance.ConsumerFixture;
import javax.sql.DataSource;

/** The acceptance suite on a real Kafka broker, through {@link KafkaFixture}. */
class KafkaAcceptanceTest extends ConsumerAcceptanceSuite {

  @Override
  protected ConsumerFixture fixture(DataSource dataSource, String schema) {
    return new KafkaFixture(TestKafka.shared(), dataSource, schema);
  }
}
