package dev.inbox.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What every scenario shares in one invocation of the jar: the options, the database and the
 * workload, and the warm-up-then-median discipline.
 */
final class BenchmarkRun {
  final InboxBenchmarks options;
  final DataSource dataSource;
  final Workload workload;

  BenchmarkRun(InboxBenchmarks options, DataSource dataSource, Workload workload) {
    this.options = options;
    this.dataSource = dataSource;
    this.workload = workload;
  }

  /** A timed action that returns its own measurement. */
  interface Timed {
    Measurement run() throws Exception;
  }

  /** The median of {@code --runs} measured runs after {@code --warmup} unmeasured ones. */
  record Repeated(double medianSeconds, List<Double> runSeconds, boolean correct) {}

  Repeated repeat(Timed timed) throws Exception {
    for (int i = 0; i < options.warmup; i++) {
      timed.run();
    }
    List<Double> seconds = new ArrayList<>();
    boolean correct = true;
    for (int i = 0; i < options.runs; i++) {
      Measurement m = timed.run();
      seconds.add(m.seconds());
      correct &= m.correct();
    }
    return new Repeated(median(seconds), seconds, correct);
  }

  /**
   * Prints one throughput line per variant, in the results' order; the first variant is the
   * baseline of {@code ratioField}. Returns whether every run of every variant was correct.
   */
  boolean printThroughput(
      JsonLine head,
      String parameter,
      long parameterValue,
      String ratioField,
      Map<String, Repeated> results) {
    boolean allCorrect = true;
    double baseline = 0;
    List<Double> baselineRuns = null;
    for (Map.Entry<String, Repeated> entry : results.entrySet()) {
      Repeated result = entry.getValue();
      double rate = workload.messages.size() / result.medianSeconds();
      if (baseline == 0) {
        baseline = rate;
        baselineRuns = result.runSeconds();
      }
      allCorrect &= result.correct();
      print(
          head.copy()
              .put("variant", entry.getKey())
              .put(parameter, parameterValue)
              .put("messages", workload.messages.size())
              .put("duplicate_rate", options.duplicateRate, 2)
              .put("runs", options.runs)
              .put("seconds", result.medianSeconds(), 3)
              .put("msgs_per_s", rate, 0)
              .put(ratioField, rate / baseline, 3)
              .put("paired_ratio", pairedRatio(baselineRuns, result.runSeconds()), 3)
              .put("run_seconds", result.runSeconds(), 3)
              .put("correct", result.correct()));
    }
    return allCorrect;
  }

  /**
   * The median over runs of the baseline's seconds over this variant's, run i against run i. The
   * variants take turns run by run, so each pair ran back to back: on a machine whose speed drifts
   * within minutes this is steadier than the ratio of the two medians.
   */
  static double pairedRatio(List<Double> baselineRuns, List<Double> runs) {
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < Math.min(baselineRuns.size(), runs.size()); i++) {
      ratios.add(baselineRuns.get(i) / runs.get(i));
    }
    return median(ratios);
  }

  void print(JsonLine line) {
    System.out.println(line);
    System.out.flush();
  }

  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
