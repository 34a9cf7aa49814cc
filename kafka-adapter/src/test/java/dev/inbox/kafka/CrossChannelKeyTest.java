package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import dev.inbox.internal.Fingerprints;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

/**
 * A payment taken over HTTP and then consumed from Kafka under the same key and scope: the HTTP
 * filter's request fingerprint and the consumer's message fingerprint are of different kinds, so
 * the record is a duplicate, not a mismatch, and the payment takes effect once.
 */
class CrossChannelKeyTest extends KafkaTestSupport {

  @Test
  void aPaymentTakenOverHttpIsCommittedAsADuplicateWhenItArrivesOverKafka() throws Exception {
    String topic = kafka.newTopic("cross-channel", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    // What the HTTP filter records: an untagged SHA-256 of the request.
    Execution http =
        inbox.execute(
            group,
            "pay-x",
            Fingerprints.sha256("POST /payments text/plain 100"),
            tx -> {
              effects.apply(tx, "pay-x", 100);
              return null;
            });
    assertThat(http.outcome()).isEqualTo(ClaimOutcome.NEW);

    startConsumer(inbox, topic, group);
    sendAll(List.of(withKey(topic, "pay-x", "100")));
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(1);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      assertThat(admin.listTopics().names().get())
          .as("topics: no dead letter was published")
          .doesNotContain(topic + ".DLT");
    }
  }
}
