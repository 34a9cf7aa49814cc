package dev.inbox.kafka;

import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestKafka;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/** Sends payments with each key as the record key and the idempotency-key header. */
final class PaymentSender {
  private PaymentSender() {}

  static void send(PaymentStream stream, String bootstrapServers, String topic) throws Exception {
    send(stream.messages(), bootstrapServers, topic);
  }

  /** Sends the payments in this order, and waits for the broker to acknowledge each. */
  static void send(List<PaymentStream.Message> messages, String bootstrapServers, String topic)
      throws Exception {
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            TestKafka.producerConfig(bootstrapServers),
            new StringSerializer(),
            new StringSerializer())) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (PaymentStream.Message message : messages) {
        ProducerRecord<String, String> record =
            new ProducerRecord<>(topic, message.key(), Long.toString(message.amount()));
        record
            .headers()
            .add(KeyExtractor.DEFAULT_HEADER, message.key().getBytes(StandardCharsets.UTF_8));
        sent.add(producer.send(record));
      }
      for (Future<RecordMetadata> future : sent) {
        future.get();
      }
    }
  }
}
