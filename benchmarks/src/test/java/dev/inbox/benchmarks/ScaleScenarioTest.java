package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The scale scenario must count its own claims and purge exactly the expired rows. */
class ScaleScenarioTest {

  @Test
  void claimsOnEverySizeAndPurgeDeletesOnlyTheExpiredRows() throws Exception {
    InboxBenchmarks options = new InboxBenchmarks();
    new CommandLine(options).parseArgs("--runs", "1", "--warmup", "0");
    PrintStream stdout = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    boolean correct;
    try (HikariDataSource dataSource = TestDataSources.pool(4)) {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      BenchmarkRun run = new BenchmarkRun(options, dataSource, new Workload(10, 0, 1));
      correct = new ScaleScenario(dataSource, List.of(0L, 2_000L), 50, 3_000).runAll(run);
    } finally {
      System.setOut(stdout);
    }
    assertThat(correct).isTrue();
    // Only the JSON lines: a framework may log to stdout on the test classpath.
    List<String> lines =
        printed.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("{")).toList();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(1))
        .contains("\"variant\":\"claim\"", "\"rows\":2000", "\"p50_ms\":", "\"p99_ms\":")
        .contains("\"ratio_p50_vs_empty\":", "\"correct\":true");
    assertThat(lines.get(2))
        .contains("\"variant\":\"purge\"", "\"deleted\":3000", "\"purge_seconds\":")
        .contains("\"max_claim_ms_during_purge\":", "\"correct\":true");
  }
}
