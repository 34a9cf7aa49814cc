package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** The default dead-letter producer connects the way the consumer does. */
class DeadLetterProducerConfigTest {

  /** What an mTLS, SASL/OAUTHBEARER or IAM cluster needs, and a plug-in's own setting. */
  private static final Map<String, Object> CONNECTION =
      Map.ofEntries(
          Map.entry("bootstrap.servers", "broker-1:9094,broker-2:9094"),
          Map.entry("client.dns.lookup", "use_all_dns_ips"),
          Map.entry("security.protocol", "SASL_SSL"),
          Map.entry("sasl.mechanism", "OAUTHBEARER"),
          Map.entry(
              "sasl.jaas.config",
              "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"),
          Map.entry("sasl.login.callback.handler.class", "com.example.IamLoginCallbackHandler"),
          Map.entry("sasl.client.callback.handler.class", "com.example.IamClientCallbackHandler"),
          Map.entry("sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"),
          Map.entry("sasl.kerberos.service.name", "kafka"),
          Map.entry("ssl.keystore.type", "PKCS12"),
          Map.entry("ssl.keystore.location", "/etc/kafka/client.p12"),
          Map.entry("ssl.keystore.password", "keystore-secret"),
          Map.entry("ssl.key.password", "key-secret"),
          Map.entry("ssl.truststore.location", "/etc/kafka/truststore.p12"),
          Map.entry("ssl.truststore.password", "truststore-secret"),
          Map.entry("ssl.endpoint.identification.algorithm", ""),
          Map.entry("ssl.protocol", "TLSv1.3"),
          Map.entry("request.timeout.ms", 45_000),
          Map.entry("reconnect.backoff.max.ms", 2_000),
          Map.entry("metadata.max.age.ms", 60_000),
          Map.entry("com.example.iam.role", "arn:aws:iam::123:role/payments"));

  @Test
  void everyConnectionAndSecuritySettingOfTheConsumerReachesTheProducer() {
    Map<String, Object> consumer = new HashMap<>(CONNECTION);
    consumer.put("group.id", "payments");
    consumer.put("group.instance.id", "payments-1");
    consumer.put("auto.offset.reset", "earliest");
    consumer.put("enable.auto.commit", "false");
    consumer.put("max.poll.records", 500);
    consumer.put("key.deserializer", ByteArrayDeserializer.class);
    consumer.put("value.deserializer", ByteArrayDeserializer.class);
    consumer.put("interceptor.classes", "com.example.ConsumerTracing");
    consumer.put("client.id", "payments-consumer");

    Map<String, Object> producer = InboxKafkaConsumer.deadLetterProducerConfig(consumer, Map.of());

    assertThat(producer).containsAllEntriesOf(CONNECTION);
    assertThat(producer)
        .doesNotContainKeys(
            "group.id",
            "group.instance.id",
            "auto.offset.reset",
            "enable.auto.commit",
            "max.poll.records",
            "key.deserializer",
            "value.deserializer",
            // A consumer's interceptors are not producer interceptors.
            "interceptor.classes")
        .containsEntry("client.id", "payments-consumer-dlt")
        .containsEntry("acks", "all")
        .containsEntry("enable.idempotence", "true")
        .containsEntry("key.serializer", ByteArraySerializer.class)
        .containsEntry("value.serializer", ByteArraySerializer.class);
  }

  @Test
  void theUsersDeadLetterSettingsWinOverTheCopiedOnesButNotOverTheSerializers() {
    Map<String, Object> producer =
        InboxKafkaConsumer.deadLetterProducerConfig(
            CONNECTION,
            Map.of(
                "bootstrap.servers", "dlt-cluster:9094",
                "sasl.jaas.config", "dlt-jaas",
                "value.serializer", "org.apache.kafka.common.serialization.StringSerializer"));

    assertThat(producer)
        .containsEntry("bootstrap.servers", "dlt-cluster:9094")
        .containsEntry("sasl.jaas.config", "dlt-jaas")
        .containsEntry("ssl.keystore.location", "/etc/kafka/client.p12")
        .containsEntry("value.serializer", ByteArraySerializer.class);
  }
}
