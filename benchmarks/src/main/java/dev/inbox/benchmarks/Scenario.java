package dev.inbox.benchmarks;

/**
 * One named scenario of the benchmark jar. It runs all its variants, prints one JSON line per
 * variant and parameter set through {@link BenchmarkRun#print}, and says whether every run was
 * correct.
 */
interface Scenario {
  boolean run(BenchmarkRun run) throws Exception;
}
