package dev.inbox.examples;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Sends payments as JSON, with the key in the {@code idempotency-key} header. */
@Command(
    name = "kafka-producer",
    mixinStandardHelpOptions = true,
    description = {
      "Send payments to Kafka, re-sending some with the same idempotency-key.",
      "The last line on stdout is {\"sent\":N,\"distinct\":K,\"sumCents\":S}."
    })
final class KafkaProducerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--bootstrap-servers",
      defaultValue = "127.0.0.1:9092",
      description = "Kafka (default: ${DEFAULT-VALUE}).")
  String bootstrapServers;

  @Option(
      names = "--topic",
      defaultValue = "payments",
      description = "Topic (default: ${DEFAULT-VALUE}).")
  String topic;

  @Option(
      names = "--count",
      defaultValue = "1000",
      description = "Payments to send, re-sends included (default: ${DEFAULT-VALUE}).")
  int count;

  @Option(
      names = "--duplicate-rate",
      defaultValue = "0.2",
      description = "Fraction re-sent with an earlier key (default: ${DEFAULT-VALUE}).")
  double duplicateRate;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description =
          "Random seed; the same seed sends the same payments (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--id-prefix",
      defaultValue = "kafka",
      description = "Prefix of payment ids (default: ${DEFAULT-VALUE}).")
  String idPrefix;

  @Override
  public Integer call() throws Exception {
    Validate.hostPorts(spec, "--bootstrap-servers", bootstrapServers);
    Validate.name(spec, "--topic", topic);
    Validate.positive(spec, "--count", count);
    Validate.rate(spec, "--duplicate-rate", duplicateRate);
    Validate.name(spec, "--id-prefix", idPrefix);
    PaymentPlan plan = PaymentPlan.generate(idPrefix, count, duplicateRate, seed);
    try {
      send(bootstrapServers, topic, plan.sends());
    } catch (ExecutionException | KafkaException e) {
      throw new ExampleFailure(
          "cannot send payments to topic "
              + topic
              + " on Kafka at "
              + bootstrapServers
              + " (--bootstrap-servers): "
              + CommandErrors.rootCause(e).getMessage()
              + " Check that a broker runs there, and that the topic exists or the broker creates"
              + " topics.",
          e);
    }
    System.out.println(plan.summaryJson());
    return 0;
  }

  /** Sends every payment and waits for every ack. */
  static void send(String bootstrapServers, String topic, List<Payment> payments) throws Exception {
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            KafkaProducers.config(bootstrapServers),
            new StringSerializer(),
            new ByteArraySerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>(payments.size());
      for (Payment payment : payments) {
        ProducerRecord<String, byte[]> record =
            new ProducerRecord<>(topic, payment.account(), payment.toJson());
        record
            .headers()
            .add("idempotency-key", payment.paymentId().getBytes(StandardCharsets.UTF_8));
        acks.add(producer.send(record));
      }
      for (Future<RecordMetadata> ack : acks) {
        ack.get();
      }
    }
  }
}
