package dev.inbox.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
