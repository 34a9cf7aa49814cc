package dev.inbox.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import dev.inbox.kafka.InboxKafkaConsumer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The child JVM of the {@code memory} scenario: consumes a whole topic with the kafka-adapter into
 * the payments tables of a schema, and prints the heap in use after a full GC as {@code heap
 * <records committed> <bytes>} about every 1% of the records, then {@code done <seconds>}. Run it
 * with the heap under test, such as {@code -Xmx256m}.
 *
 * <p>Arguments: bootstrap servers, topic, JDBC URL, schema, record count.
 */
public final class MemoryConsumerMain {
  static final int SAMPLES = 100;

  private MemoryConsumerMain() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    String bootstrapServers = args[0];
    String topic = args[1];
    String jdbcUrl = args[2];
    PaymentsSchema payments = new PaymentsSchema(args[3]);
    long total = Long.parseLong(args[4]);
    long step = Math.max(1, total / SAMPLES);
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    sample(memory, 0);
    InboxSettings settings =
        InboxSettings.builder().schema(payments.schema).janitorInterval(Duration.ZERO).build();
    ProgressConsumer[] progress = new ProgressConsumer[1];
    try (HikariDataSource dataSource = InboxDataSources.pool(jdbcUrl, null, null, 2);
        Inbox inbox =
            Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build()) {
      InboxKafkaConsumer<String, byte[]> consumer =
          InboxKafkaConsumer.builder(new StringDeserializer(), new ByteArrayDeserializer())
              .properties(
                  Map.of(
                      ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                      bootstrapServers,
                      ConsumerConfig.GROUP_ID_CONFIG,
                      "bench-memory-" + UUID.randomUUID(),
                      ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                      "earliest"))
              .consumerFactory(
                  properties ->
                      progress[0] =
                          new ProgressConsumer(properties, total) {
                            private long nextSample = step;

                            @Override
                            void committed(long records) {
                              if (records >= nextSample || records >= total) {
                                sample(memory, records);
                                nextSample = (records / step + 1) * step;
                              }
                            }
                          })
              .topics(topic)
              .inbox(inbox)
              .pollTimeout(Duration.ofMillis(100))
              .handler((record, tx) -> payments.apply(tx, KafkaScenario.payment(record)))
              .build();
      try {
        consumer.start();
        if (!progress[0].awaitDone(Duration.ofHours(1))) {
          throw new IllegalStateException("not all records of " + topic + " were committed");
        }
      } finally {
        consumer.close();
      }
      System.out.printf("done %.3f%n", progress[0].seconds());
      System.out.flush();
    }
  }

  /** The heap still in use after a full collection: what the consumer keeps alive. */
  private static void sample(MemoryMXBean memory, long records) {
    System.gc();
    System.out.println("heap " + records + " " + memory.getHeapMemoryUsage().getUsed());
    System.out.flush();
  }
}
