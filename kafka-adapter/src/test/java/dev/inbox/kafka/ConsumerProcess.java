package dev.inbox.kafka;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.NonRetryableException;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.acceptance.HandlerKind;
import dev.inbox.testing.acceptance.Payments;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The {@link KafkaFixture}'s consumer in its own JVM, so that a test can kill it with {@code kill
 * -9}. Arguments: bootstrap servers, topic, group, JDBC URL, database user, schema, and the {@link
 * HandlerKind}.
 */
public final class ConsumerProcess {
  public static void main(String[] args) throws Exception {
    String bootstrapServers = args[0];
    String topic = args[1];
    String group = args[2];
    String user = args[4].isEmpty() ? null : args[4];
    String schema = args[5];
    HikariDataSource dataSource = InboxDataSources.pool(args[3], user, null, 4);
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(KafkaTestSupport.settings(schema).build())
            .build();
    InboxKafkaConsumer.Builder<String, String> builder =
        InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
            .properties(
                Map.of(
                    "bootstrap.servers",
                    bootstrapServers,
                    "group.id",
                    group,
                    "auto.offset.reset",
                    "earliest",
                    "max.poll.records",
                    200,
                    // A restarted child takes over its killed predecessor's partitions at once,
                    // instead of waiting for the session timeout.
                    "group.instance.id",
                    group + "-child",
                    "session.timeout.ms",
                    6000))
            .topics(topic)
            .inbox(inbox);
    KafkaFixture.handleWith(
        builder,
        HandlerKind.valueOf(args[6]),
        new Payments(new EffectsTable(dataSource, schema), NonRetryableException::new));
    InboxKafkaConsumer<String, String> consumer = builder.build();
    System.out.println("consumer started");
    consumer.run();
    new CountDownLatch(1).await();
  }
}
