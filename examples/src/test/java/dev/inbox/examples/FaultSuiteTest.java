package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Exactly-once effects whatever fails: consumers killed with kill -9, database backends terminated,
 * PostgreSQL and the Kafka broker restarted, RabbitMQ connections cut and the HTTP server killed
 * under 409-and-retry traffic. The short run is part of every build; the full one runs with {@code
 * ./mvnw verify -Pfaults}. Replay a run with {@code -Dinbox.faults.seed=N}.
 */
class FaultSuiteTest {

  @Test
  void shortRunLosesNothingAndDoublesNothing() throws Exception {
    assertExactlyOnce("short", FaultPlan.SHORT);
  }

  @Test
  @Tag("faults")
  void fullRunLosesNothingAndDoublesNothing() throws Exception {
    assertExactlyOnce("full", FaultPlan.FULL);
  }

  private static void assertExactlyOnce(String name, FaultPlan plan) throws Exception {
    long seed =
        Long.getLong("inbox.faults.seed", ThreadLocalRandom.current().nextLong(1, 1_000_000));
    System.out.printf(
        "fault suite (%s): seed %d (replay with -Dinbox.faults.seed=%d); %s%n",
        name, seed, seed, plan);
    long start = System.nanoTime();
    FaultReport report = new FaultRun(plan, seed).run();
    System.out.printf(
        "fault suite (%s), seed %d, %.0f s, %d HTTP requests; %d HTTP keys also sent over Kafka,"
            + " %d of them applied by the Kafka consumer first; faults injected:%n  %s%n"
            + "children that exited on their own and were restarted: %s%n%s",
        name,
        seed,
        (System.nanoTime() - start) / 1e9,
        report.httpRequests,
        report.httpKeysAlsoOverKafka,
        report.httpKeysAppliedByKafka,
        String.join("\n  ", report.faultsInjected),
        report.selfExits.isEmpty() ? "none" : "\n  " + String.join("\n  ", report.selfExits),
        report.table());
    assertThat(report.passed()).as("seed %d:%n%s", seed, report.table()).isTrue();
  }
}
