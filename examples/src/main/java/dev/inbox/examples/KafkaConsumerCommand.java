package dev.inbox.examples;

import dev.inbox.Inbox;
import dev.inbox.NonRetryableException;
import dev.inbox.kafka.InboxKafkaConsumer;
import dev.inbox.kafka.KeyExtractor;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Consumes payments from Kafka, each exactly once, into the payments database. */
@Command(
    name = "kafka-consumer",
    mixinStandardHelpOptions = true,
    description = "Apply the payments of a Kafka topic exactly once, until stopped (Ctrl-C).")
final class KafkaConsumerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--bootstrap-servers",
      defaultValue = "localhost:9092",
      description = "Kafka brokers (default: ${DEFAULT-VALUE}).")
  String bootstrapServers;

  @Option(
      names = "--topic",
      defaultValue = "payments",
      description = "Topic to consume (default: ${DEFAULT-VALUE}).")
  String topic;

  @Option(
      names = "--group",
      defaultValue = "payments",
      description = "Consumer group (default: ${DEFAULT-VALUE}).")
  String group;

  @Option(
      names = "--scope",
      defaultValue = "demo",
      description =
          "Inbox scope; the HTTP API's tenant for the same keys (default: ${DEFAULT-VALUE}).")
  String scope;

  @Option(
      names = "--jdbc-url",
      defaultValue = ConsumerDatabase.LOCAL_URL,
      description = "PostgreSQL JDBC URL (default: ${DEFAULT-VALUE}).")
  String jdbcUrl;

  @Option(
      names = "--instance",
      defaultValue = "1",
      description =
          "This consumer's name within the group, for static membership: a consumer restarted"
              + " with the same name takes its partitions back at once (default: ${DEFAULT-VALUE}).")
  String instance;

  @Mixin HandlerOption handler;

  @Override
  public Integer call() throws Exception {
    Validate.hostPorts(spec, "--bootstrap-servers", bootstrapServers);
    Validate.name(spec, "--topic", topic);
    Validate.name(spec, "--group", group);
    Validate.name(spec, "--scope", scope);
    Validate.name(spec, "--instance", instance);
    Validate.jdbcUrl(spec, "--jdbc-url", jdbcUrl);
    boolean atOnce = handler.atOnce(spec);
    try (ConsumerDatabase db = new ConsumerDatabase(jdbcUrl, 4)) {
      InboxKafkaConsumer<String, byte[]> consumer =
          consumer(
              Map.of(
                  "bootstrap.servers",
                  bootstrapServers,
                  "group.id",
                  group,
                  "auto.offset.reset",
                  "earliest",
                  // A restarted consumer takes its partitions back at once after a crash.
                  "group.instance.id",
                  group + "-" + topic + "-" + instance,
                  "session.timeout.ms",
                  6000),
              topic,
              scope,
              db.inbox,
              atOnce);
      Runtime.getRuntime().addShutdownHook(new Thread(consumer::close, "kafka-consumer-stop"));
      System.out.println("consuming " + topic + " as group " + group + " into " + scope);
      consumer.run();
    }
    return 0;
  }

  /** The consumer this command runs, for tests that run it in their own JVM. */
  static InboxKafkaConsumer<String, byte[]> consumer(
      Map<String, Object> properties, String topic, String scope, Inbox inbox, boolean atOnce) {
    // A payment is only a payment under the key its producer gave it: a record without the
    // header is dead-lettered, not booked under its offset, where a re-send would book it again.
    KeyExtractor<String, byte[]> keys = KeyExtractor.header(KeyExtractor.DEFAULT_HEADER);
    InboxKafkaConsumer.Builder<String, byte[]> builder =
        InboxKafkaConsumer.builder(new StringDeserializer(), new ByteArrayDeserializer())
            .properties(properties)
            .topics(topic)
            .inbox(inbox)
            .scope(scope)
            .keyExtractor(keys);
    if (atOnce) {
      builder.newRecordsHandler(
          (records, tx) ->
              PaymentsDatabase.applyAll(
                  tx, records.stream().map(record -> payment(record, keys)).toList(), "kafka"));
    } else {
      builder.handler((record, tx) -> PaymentsDatabase.apply(tx, payment(record, keys), "kafka"));
    }
    return builder.build();
  }

  /**
   * The payment under the key the inbox recorded for the record. A body that is not a valid payment
   * never will be, so it goes to the dead-letter topic at once, naming the field.
   */
  private static Payment payment(
      ConsumerRecord<String, byte[]> record, KeyExtractor<String, byte[]> keys) {
    String key;
    try {
      key = keys.keyOf(record);
    } catch (Exception e) {
      throw new NonRetryableException(e.getMessage(), e);
    }
    try {
      return Payment.fromJson(record.value(), key);
    } catch (IllegalArgumentException e) {
      throw new NonRetryableException("payment '" + key + "': " + e.getMessage(), e);
    }
  }
}
