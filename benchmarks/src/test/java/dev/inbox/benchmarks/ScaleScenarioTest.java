package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Storage;
import dev.inbox.testing.TestDataSources;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The scale scenario must count its own claims and purge exactly the expired rows. */
class ScaleScenarioTest {

  /** What a scenario printed, and whether it reported itself correct. */
  private record Printed(boolean correct, List<String> lines) {}

  private interface Measured {
    boolean run(BenchmarkRun run, HikariDataSource dataSource) throws Exception;
  }

  private static Printed print(Measured measured, String... args) throws Exception {
    InboxBenchmarks options = new InboxBenchmarks();
    new CommandLine(options).parseArgs(args);
    PrintStream stdout = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    boolean correct;
    try (HikariDataSource dataSource = TestDataSources.pool(6)) {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      BenchmarkRun run = new BenchmarkRun(options, dataSource, new Workload(200, 0.2, 1));
      correct = measured.run(run, dataSource);
    } finally {
      System.setOut(stdout);
    }
    // Only the JSON lines: a framework may log to stdout on the test classpath.
    return new Printed(
        correct,
        printed.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("{")).toList());
  }

  private static double number(String line, String field) {
    Matcher m = Pattern.compile("\"" + field + "\":(-?[0-9.]+)").matcher(line);
    assertThat(m.find()).as(field + " in " + line).isTrue();
    return Double.parseDouble(m.group(1));
  }

  @Test
  void claimsOnEverySizeAndPurgeDeletesOnlyTheExpiredRows() throws Exception {
    Printed printed =
        print(
            (run, dataSource) ->
                new ScaleScenario(dataSource, List.of(0L, 2_000L), 50, 3_000).runAll(run),
            "--runs",
            "1",
            "--warmup",
            "0");
    assertThat(printed.correct()).isTrue();
    List<String> lines = printed.lines();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(1))
        .contains("\"variant\":\"claim\"", "\"rows\":2000", "\"p50_ms\":", "\"p99_ms\":")
        .contains("\"ratio_p50_vs_empty\":", "\"correct\":true", "\"storage\":\"table\"");
    assertThat(lines.get(2))
        .contains("\"variant\":\"purge\"", "\"deleted\":3000", "\"purge_seconds\":")
        .contains("\"max_claim_ms_during_purge\":", "\"correct\":true", "\"claimers\":1")
        .containsPattern(
            "\"claim_waits_during_purge\":\\{(\"[A-Za-z]+(:[A-Za-z]+)?\":[0-9]+,?)*\\}");
    assertThat(number(lines.get(1), "table_mb")).isPositive();
    assertThat(number(lines.get(1), "index_mb")).isPositive();
  }

  /**
   * The claims' rows spread over three generations, and the retention of a generation of 3 000
   * expired rows beside 3 000 live ones while two threads claim: exactly the expired generation
   * dropped, each of its steps timed within the purge (or -1, unseen at this size).
   */
  @Test
  void onThePartitionedStorageTheRetentionDropsExactlyTheExpiredGeneration() throws Exception {
    Printed printed =
        print(
            (run, dataSource) ->
                new ScaleScenario(
                        dataSource, List.of(0L, 2_000L), 50, 3_000, Storage.PARTITIONED, 2, 3)
                    .runAll(run),
            "--runs",
            "1",
            "--warmup",
            "0");
    assertThat(printed.correct()).isTrue();
    List<String> lines = printed.lines();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(1))
        .contains("\"variant\":\"claim\"", "\"rows\":2000", "\"correct\":true")
        .contains("\"storage\":\"partitioned\"", "\"generations\":3");
    String purge = lines.get(2);
    assertThat(purge)
        .contains("\"variant\":\"purge\"", "\"deleted\":3000", "\"correct\":true")
        .contains("\"storage\":\"partitioned\"", "\"claimers\":2");
    double seconds = number(purge, "purge_seconds");
    for (String step : List.of("carry_over_seconds", "count_seconds", "detach_drop_seconds")) {
      double stepSeconds = number(purge, step);
      assertThat(stepSeconds == -1 || (stepSeconds >= 0 && stepSeconds <= seconds + 1))
          .as(step + " in " + purge)
          .isTrue();
    }
    assertThat(number(purge, "claims_over_50ms_during_purge"))
        .isBetween(0.0, number(purge, "claims_during_purge"));
  }

  /**
   * 240 keys a day for a simulated week, purged each simulated hour. The plain table keeps the last
   * 24 hours' 240 rows and the one completed exactly at the purge's boundary; the partitioned one
   * rotates every 6 hours and drops a generation once its successor is older than 24 hours, so it
   * keeps generations 23 to 28: the last 30 hours' 300 rows, in 6 partitions.
   */
  @Test
  void aSimulatedWeekKeepsExactlyTheRowsTheRetentionRuleKeeps() throws Exception {
    Printed printed =
        print(
            (run, dataSource) ->
                new SimulatedWeek(dataSource, Storage.TABLE, 240).run(run)
                    & new SimulatedWeek(dataSource, Storage.PARTITIONED, 240).run(run));
    assertThat(printed.correct()).isTrue();
    assertThat(printed.lines()).hasSize(2);
    String table = printed.lines().get(0);
    assertThat(table).contains("\"variant\":\"week\"", "\"storage\":\"table\"");
    assertThat(number(table, "inserted")).isEqualTo(1680);
    assertThat(number(table, "live_rows")).isEqualTo(241);
    assertThat(number(table, "purged")).isEqualTo(1439);
    assertThat(number(table, "partitions")).isEqualTo(1);
    assertThat(number(table, "vacuums")).isPositive();
    String partitioned = printed.lines().get(1);
    assertThat(partitioned).contains("\"variant\":\"week\"", "\"storage\":\"partitioned\"");
    assertThat(number(partitioned, "live_rows")).isEqualTo(300);
    assertThat(number(partitioned, "purged")).isEqualTo(1380);
    assertThat(number(partitioned, "partitions")).isEqualTo(6);
    for (String line : printed.lines()) {
      assertThat(line).contains("\"total_mb_by_day\":[", "\"bytes_per_row_by_day\":[");
      assertThat(number(line, "table_mb")).isPositive();
    }
  }

  /**
   * Two instance counts of one group on one topic, with either writes: every payment applied once
   * at each count (and the accounts credited, or left at zero).
   */
  @Test
  void consumersOfOneGroupApplyEveryPaymentOnceAtEachInstanceCount() throws Exception {
    for (String writes : List.of("payment-and-balance", "payment")) {
      Printed printed =
          print(
              (run, dataSource) -> ConsumerScaling.runAll(run),
              "--scale-consumers",
              "1,2",
              "--scale-consumers-writes",
              writes,
              "--messages",
              "200");
      assertThat(printed.correct()).isTrue();
      assertThat(printed.lines()).hasSize(2);
      for (int i = 0; i < 2; i++) {
        String line = printed.lines().get(i);
        assertThat(line)
            .contains("\"variant\":\"consumers\"", "\"instances\":" + (i + 1), "\"partitions\":2")
            .contains("\"writes\":\"" + writes + "\"", "\"correct\":true");
        assertThat(number(line, "msgs_per_s")).isPositive();
      }
    }
  }
}
