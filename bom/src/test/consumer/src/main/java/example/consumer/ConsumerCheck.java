package example.consumer;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.kafka.InboxKafkaConsumer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * What a user's first program does with the published jars: build an inbox on PostgreSQL, run one
 * key twice, and see the handler run once. Exits 1 on any other outcome.
 */
public final class ConsumerCheck {
  public static void main(String[] args) throws Exception {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(args[0]);
    // A schema of its own, so that runs and other tests on the same database never meet.
    String schema = "consumer_check_" + Long.toHexString(System.nanoTime());
    execute(dataSource, "CREATE SCHEMA " + schema);
    try (Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(InboxSettings.builder().schema(schema).build())
            .migrate(true)
            .build()) {
      AtomicInteger runs = new AtomicInteger();
      Execution first = inbox.execute("consumer-check", "key-1", tx -> count(runs));
      Execution second = inbox.execute("consumer-check", "key-1", tx -> count(runs));
      // The adapter resolves and links through the BOM too (a builder needs no broker).
      InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer());
      if (first.outcome() != ClaimOutcome.NEW
          || second.outcome() != ClaimOutcome.DUPLICATE
          || runs.get() != 1) {
        System.err.printf(
            "consumer check FAILED: outcomes %s then %s, handler ran %d times (expected NEW, DUPLICATE, 1)%n",
            first.outcome(), second.outcome(), runs.get());
        System.exit(1);
      }
      System.out.println("consumer check passed: NEW then DUPLICATE, the handler ran once");
    } finally {
      execute(dataSource, "DROP SCHEMA " + schema + " CASCADE");
    }
  }

  private static dev.inbox.StoredResult count(AtomicInteger runs) {
    runs.incrementAndGet();
    return null;
  }

  private static void execute(PGSimpleDataSource dataSource, String sql) throws Exception {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private ConsumerCheck() {}
}
