package dev.inbox.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.InboxDataSources;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Prints one JSON line per scenario, variant and parameters: the median of several runs after a
 * warm-up, and {@code correct}, checked after every run from the effects and the balances.
 */
@Command(
    name = "inbox-benchmarks",
    mixinStandardHelpOptions = true,
    description = "Throughput of the inbox against a no-deduplication baseline, as JSON lines.")
public final class InboxBenchmarks implements Callable<Integer> {
  @Option(
      names = "--jdbc-url",
      defaultValue = "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres",
      description = "PostgreSQL to measure on (default: ${DEFAULT-VALUE}).")
  String jdbcUrl;

  @Option(
      names = "--scenario",
      defaultValue = "core",
      split = ",",
      description = "Scenarios to run: core (default: ${DEFAULT-VALUE}).")
  List<String> scenarios;

  @Option(
      names = "--messages",
      defaultValue = "100000",
      description = "Payments per run, re-sends included (default: ${DEFAULT-VALUE}).")
  int messages;

  @Option(
      names = "--duplicate-rate",
      defaultValue = "0.2",
      description = "Fraction of re-sends (default: ${DEFAULT-VALUE}).")
  double duplicateRate;

  @Option(
      names = "--batch-sizes",
      defaultValue = "1,10,100,500",
      split = ",",
      description = "Batch sizes of the core scenario (default: ${DEFAULT-VALUE}).")
  List<Integer> batchSizes;

  @Option(
      names = "--runs",
      defaultValue = "3",
      description =
          "Measured runs per variant; the median is reported (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(
      names = "--warmup",
      defaultValue = "1",
      description = "Unmeasured runs first (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--seed",
      defaultValue = "42",
      description = "Workload seed (default: ${DEFAULT-VALUE}).")
  long seed;

  public static void main(String[] args) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.exit(new CommandLine(new InboxBenchmarks()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (messages < 1 || runs < 1 || warmup < 0 || duplicateRate < 0 || duplicateRate >= 1) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "need --messages >= 1, --runs >= 1, --warmup >= 0 and 0 <= --duplicate-rate < 1");
    }
    for (String scenario : scenarios) {
      if (!scenario.equals("core")) {
        throw new CommandLine.ParameterException(
            new CommandLine(this), "unknown --scenario '" + scenario + "'; known: core");
      }
    }
    Workload workload = new Workload(messages, duplicateRate, seed);
    boolean allCorrect = true;
    try (HikariDataSource dataSource = InboxDataSources.pool(jdbcUrl, null, null, 4)) {
      CoreScenario core = new CoreScenario(dataSource, workload);
      for (int batchSize : batchSizes) {
        double baseline = 0;
        for (String variant : List.of("nodedup", "inbox")) {
          for (int i = 0; i < warmup; i++) {
            core.run(variant, batchSize);
          }
          List<Double> seconds = new ArrayList<>();
          boolean correct = true;
          for (int i = 0; i < runs; i++) {
            CoreScenario.Measurement m = core.run(variant, batchSize);
            seconds.add(m.seconds());
            correct &= m.correct();
          }
          double median = median(seconds);
          double rate = messages / median;
          if (variant.equals("nodedup")) {
            baseline = rate;
          }
          allCorrect &= correct;
          System.out.println(
              String.format(
                  Locale.ROOT,
                  "{\"scenario\":\"core\",\"variant\":\"%s\",\"batch_size\":%d,"
                      + "\"messages\":%d,\"duplicate_rate\":%s,\"runs\":%d,\"seconds\":%.3f,"
                      + "\"msgs_per_s\":%.0f,\"ratio_vs_nodedup\":%.3f,\"run_seconds\":[%s],"
                      + "\"correct\":%s}",
                  variant,
                  batchSize,
                  messages,
                  duplicateRate,
                  runs,
                  median,
                  rate,
                  rate / baseline,
                  seconds.stream()
                      .map(s -> String.format(Locale.ROOT, "%.3f", s))
                      .collect(Collectors.joining(",")),
                  correct));
        }
      }
    }
    return allCorrect ? 0 : 1;
  }

  private static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
