package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DatabaseOutageTest extends KafkaTestSupport {

  @Test
  void terminatedBackendsMidStreamLoseAndDoubleNothing() throws Exception {
    String topic = kafka.newTopic("outage", 2);
    String group = newGroup();
    PaymentStream stream = new PaymentStream("d", 8_000, 2_000, 5);
    Inbox inbox = inbox(settings().build());
    startConsumer(inbox, topic, group);
    PaymentSender.send(stream, kafka.bootstrapServers(), topic);

    int terminations = 0;
    for (long threshold = 1_000; threshold <= 6_000; threshold += 1_000) {
      long target = threshold;
      await(target + " effects", Duration.ofSeconds(60), () -> effects.count() >= target);
      terminations += terminateOtherBackends();
    }
    awaitFullyCommitted(group, topic, Duration.ofSeconds(90));

    dataSource.getHikariPoolMXBean().softEvictConnections(); // the terminated ones
    assertThat(terminations).as("backends terminated").isGreaterThanOrEqualTo(6);
    assertExactlyOnce(stream);
  }

  /** Kills every other connection to the test database, as a failover or an admin would. */
  private static int terminateOtherBackends() throws Exception {
    try (Connection c = TestDatabase.shared().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
