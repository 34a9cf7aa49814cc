package dev.inbox.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Warm-up then median like {@link BenchmarkRun#repeat}, but with the variants taking turns run by
 * run (plain, inbox, plain, inbox, ...), so that a disturbance from outside, such as another
 * process on a shared machine, falls on every variant alike instead of on one of them.
 */
final class InterleavedRuns {
  private InterleavedRuns() {}

  /** A timed run of the named variant. */
  interface VariantRun {
    Measurement run(String variant) throws Exception;
  }

  static Map<String, BenchmarkRun.Repeated> repeat(
      BenchmarkRun run, List<String> variants, VariantRun timed) throws Exception {
    for (int i = 0; i < run.options.warmup; i++) {
      for (String variant : variants) {
        timed.run(variant);
      }
    }
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    Map<String, Boolean> correct = new LinkedHashMap<>();
    for (String variant : variants) {
      seconds.put(variant, new ArrayList<>());
      correct.put(variant, true);
    }
    for (int i = 0; i < run.options.runs; i++) {
      for (String variant : variants) {
        Measurement m = timed.run(variant);
        seconds.get(variant).add(m.seconds());
        correct.merge(variant, m.correct(), Boolean::logicalAnd);
      }
    }
    Map<String, BenchmarkRun.Repeated> results = new LinkedHashMap<>();
    for (String variant : variants) {
      List<Double> runSeconds = seconds.get(variant);
      results.put(
          variant,
          new BenchmarkRun.Repeated(
              BenchmarkRun.median(runSeconds), runSeconds, correct.get(variant)));
    }
    return results;
  }
}
