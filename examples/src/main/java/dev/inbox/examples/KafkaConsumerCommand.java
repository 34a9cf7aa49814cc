package dev.inbox.examples;

import dev.inbox.kafka.InboxKafkaConsumer;
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
      InboxKafkaConsumer.Builder<String, byte[]> builder =
          InboxKafkaConsumer.builder(new StringDeserializer(), new ByteArrayDeserializer())
              .properties(
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
                      6000))
              .topics(topic)
              .inbox(db.inbox)
              .scope(scope);
      if (atOnce) {
        builder.newRecordsHandler(
            (records, tx) ->
                PaymentsDatabase.applyAll(
                    tx, records.stream().map(KafkaConsumerCommand::payment).toList(), "kafka"));
      } else {
        builder.handler((record, tx) -> PaymentsDatabase.apply(tx, payment(record), "kafka"));
      }
      InboxKafkaConsumer<String, byte[]> consumer = builder.build();
      Runtime.getRuntime().addShutdownHook(new Thread(consumer::close, "kafka-consumer-stop"));
      System.out.println("consuming " + topic + " as group " + group + " into " + scope);
      consumer.run();
    }
    return 0;
  }

  private static Payment payment(ConsumerRecord<String, byte[]> record) {
    String paymentId =
        new String(
            record.headers().lastHeader("idempotency-key").value(),
            java.nio.charset.StandardCharsets.UTF_8);
    return Payment.fromJson(record.value(), paymentId);
  }
}
