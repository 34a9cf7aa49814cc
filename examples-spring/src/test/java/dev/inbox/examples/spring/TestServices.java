package dev.inbox.examples.spring;

import dev.inbox.testing.Await;
import dev.inbox.testing.TestDatabase;
import dev.inbox.testing.TestKafka;
import dev.inbox.testing.TestRabbit;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Where the tests' payments service finds the tests' PostgreSQL, Kafka and RabbitMQ, as the Spring
 * properties a {@code @SpringBootTest} registers or a child JVM gets on its command line, and what
 * the tests read back: payment rows, balances, the consumer group's progress.
 */
final class TestServices {
  static final Duration PATIENCE = Duration.ofMinutes(3);

  private TestServices() {}

  /**
   * The service's properties with {@code payments.name} (its topic, consumer group and queue) set
   * to {@code name}. The database password is left out: a child JVM gets it through its pgpass file
   * ({@link dev.inbox.testing.ChildJvm}), a Spring test through {@link #databasePassword}.
   */
  static Map<String, String> properties(String name) {
    TestDatabase db = TestDatabase.shared();
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("spring.datasource.url", db.jdbcUrl());
    if (db.user() != null) {
      properties.put("spring.datasource.username", db.user());
    }
    properties.put("spring.kafka.bootstrap-servers", TestKafka.shared().bootstrapServers());
    // Boot reads the virtual host as it is, so "%2F" is passed decoded.
    URI amqp = URI.create(TestRabbit.shared().uri());
    String[] credentials = amqp.getUserInfo().split(":", 2);
    properties.put("spring.rabbitmq.host", amqp.getHost());
    properties.put(
        "spring.rabbitmq.port", Integer.toString(amqp.getPort() < 0 ? 5672 : amqp.getPort()));
    properties.put("spring.rabbitmq.username", credentials[0]);
    properties.put("spring.rabbitmq.password", credentials[1]);
    properties.put(
        "spring.rabbitmq.virtual-host",
        amqp.getPath() == null || amqp.getPath().length() <= 1 ? "/" : amqp.getPath().substring(1));
    properties.put("payments.name", name);
    return properties;
  }

  static String databasePassword() {
    return TestDatabase.shared().password();
  }

  /** Rows in {@code payments} for one payment id. */
  static long rows(String paymentId) throws SQLException {
    return query(
        "SELECT count(*) FROM spring_payments.payments WHERE payment_id = ?",
        paymentId,
        rs -> rs.next() ? rs.getLong(1) : 0L);
  }

  /** Distinct payment ids that start with {@code prefix}. */
  static long distinctPayments(String prefix) throws SQLException {
    return query(
        "SELECT count(DISTINCT payment_id) FROM spring_payments.payments"
            + " WHERE payment_id LIKE ? || '%'",
        prefix, rs -> rs.next() ? rs.getLong(1) : 0L);
  }

  /** Payment rows whose id starts with {@code prefix}. */
  static long paymentRows(String prefix) throws SQLException {
    return query(
        "SELECT count(*) FROM spring_payments.payments WHERE payment_id LIKE ? || '%'",
        prefix, rs -> rs.next() ? rs.getLong(1) : 0L);
  }

  /** The channels that applied a payment, comma-separated, or null. */
  static String channel(String paymentId) throws SQLException {
    return query(
        "SELECT string_agg(channel, ',') FROM spring_payments.payments WHERE payment_id = ?",
        paymentId,
        rs -> rs.next() ? rs.getString(1) : null);
  }

  /** The balances of the accounts whose ids start with {@code prefix}. */
  static Map<String, Long> balances(String prefix) throws SQLException {
    return query(
        "SELECT account_id, balance_cents FROM spring_payments.accounts"
            + " WHERE account_id LIKE ? || '%'",
        prefix,
        rs -> {
          Map<String, Long> balances = new HashMap<>();
          while (rs.next()) {
            balances.put(rs.getString(1), rs.getLong(2));
          }
          return balances;
        });
  }

  private interface Rows<T> {
    T read(ResultSet rs) throws SQLException;
  }

  private static <T> T query(String sql, String parameter, Rows<T> rows) throws SQLException {
    try (Connection c = TestDatabase.shared().connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, parameter);
      try (ResultSet rs = ps.executeQuery()) {
        return rows.read(rs);
      }
    }
  }

  /**
   * Until the consumer group {@code topic} (the service's group has its topic's name) has committed
   * past every record of the topic: each was applied or acknowledged as a duplicate.
   */
  static void awaitGroupCaughtUp(String topic) throws Exception {
    Await.until(
        "consumer group " + topic + " commits every record", PATIENCE, () -> groupCaughtUp(topic));
  }

  static boolean groupCaughtUp(String topic) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestKafka.shared().bootstrapServers()))) {
      return ConsumerGroups.caughtUp(admin, topic, topic);
    }
  }
}
