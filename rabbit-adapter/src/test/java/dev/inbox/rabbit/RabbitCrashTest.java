package dev.inbox.rabbit;

import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RabbitCrashTest extends RabbitTestSupport {

  @ParameterizedTest(name = "{0} handler")
  @ValueSource(strings = {"per-item", "at-once"})
  void consumerKilledWithSigkillMidStreamLosesAndDoublesNothing(String handler) throws Exception {
    PaymentStream stream = new PaymentStream("k", 8_000, 2_000, 9);
    inbox(settings().build()); // creates the inbox table before the children start
    publish(stream);
    TestDatabase db = TestDatabase.shared();
    List<String> args =
        List.of(
            rabbit.uri(),
            queue.queue(),
            queue.deadLetterExchange(),
            db.jdbcUrl(),
            db.user() == null ? "" : db.user(),
            schema,
            handler);

    for (long threshold : new long[] {1_500, 4_500}) {
      try (ChildJvm child = ChildJvm.start(RabbitConsumerProcess.class, args)) {
        await(threshold + " effects", Duration.ofSeconds(60), () -> effects.count() >= threshold);
        child.kill9();
      }
    }
    try (ChildJvm last = ChildJvm.start(RabbitConsumerProcess.class, args)) {
      assertExactlyOnceAndDrained(stream);
    }
  }
}
