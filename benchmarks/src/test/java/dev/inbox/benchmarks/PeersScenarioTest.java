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

/** Every peer must apply each distinct payment once, or the comparison means nothing. */
class PeersScenarioTest {

  @Test
  void everyPeerAppliesEveryDistinctPaymentOnce() throws Exception {
    Workload workload = new Workload(300, 0.2, 11);
    try (HikariDataSource dataSource = TestDataSources.pool(4)) {
      PeersScenario peers = new PeersScenario(dataSource, workload);
      for (String peer : PeersScenario.PEERS.keySet()) {
        assertThat(peers.run(peer).correct()).as(peer).isTrue();
      }
    }
  }

  @Test
  void printsOneCheckedLinePerVariantWithItsRatioToTheInboxAtBatch100() throws Exception {
    InboxBenchmarks options = new InboxBenchmarks();
    new CommandLine(options).parseArgs("--runs", "1", "--warmup", "0", "--messages", "200");
    PrintStream stdout = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    boolean correct;
    try (HikariDataSource dataSource = TestDataSources.pool(4)) {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      Workload workload = new Workload(200, 0.2, 3);
      correct =
          new PeersScenario(dataSource, workload)
              .runAll(new BenchmarkRun(options, dataSource, workload));
    } finally {
      System.setOut(stdout);
    }
    assertThat(correct).isTrue();
    // Only the JSON lines: a framework may log to stdout on the test classpath.
    List<String> lines =
        printed.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("{")).toList();
    assertThat(lines).hasSize(2 + PeersScenario.PEERS.size());
    assertThat(lines.get(0)).contains("\"variant\":\"inbox\",\"batch_size\":100");
    assertThat(lines.get(1)).contains("\"variant\":\"inbox\",\"batch_size\":1,");
    for (String line : lines) {
      assertThat(line)
          .startsWith("{\"scenario\":\"peers\"")
          .contains("\"messages\":200", "\"msgs_per_s\":", "\"ratio_vs_inbox_batch100\":")
          .contains("\"run_seconds\":[", "\"correct\":true");
    }
    assertThat(String.join("\n", lines))
        .contains("\"variant\":\"camel\"")
        .contains("\"variant\":\"spring-integration\"")
        .contains("\"variant\":\"on-conflict\"");
  }
}
