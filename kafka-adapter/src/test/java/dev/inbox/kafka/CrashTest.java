package dev.inbox.kafka;

import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CrashTest extends KafkaTestSupport {

  @ParameterizedTest(name = "{0} handler")
  @ValueSource(strings = {"per-item", "at-once"})
  void consumerKilledWithSigkillMidStreamLosesAndDoublesNothing(String handler) throws Exception {
    String topic = kafka.newTopic("crash", 2);
    String group = newGroup();
    PaymentStream stream = new PaymentStream("c", 8_000, 2_000, 11);
    PaymentSender.send(stream, kafka.bootstrapServers(), topic);
    inbox(settings().build()); // creates the inbox table before the children start
    TestDatabase db = TestDatabase.shared();
    List<String> args =
        List.of(
            kafka.bootstrapServers(),
            topic,
            group,
            db.jdbcUrl(),
            db.user() == null ? "" : db.user(),
            schema,
            handler);

    for (long threshold : new long[] {1_500, 4_500}) {
      try (ChildJvm child = ChildJvm.start(ConsumerProcess.class, args)) {
        await(threshold + " effects", Duration.ofSeconds(60), () -> effects.count() >= threshold);
        System.out.printf(
            "killing child at %d effects (%s)%n", effects.count(), java.time.Instant.now());
        child.kill9();
      }
    }
    try (ChildJvm last = ChildJvm.start(ConsumerProcess.class, args)) {
      awaitFullyCommitted(group, topic, Duration.ofSeconds(90));
    }
    assertExactlyOnce(stream);
  }
}
