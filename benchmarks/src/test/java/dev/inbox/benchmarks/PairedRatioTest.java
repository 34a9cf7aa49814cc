package dev.inbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class PairedRatioTest {

  @Test
  void is_the_median_of_run_by_run_ratios() {
    // Run by run: 2/4, 4/4, 8/4.
    assertThat(BenchmarkRun.pairedRatio(List.of(2.0, 4.0, 8.0), List.of(4.0, 4.0, 4.0)))
        .isCloseTo(1.0, within(1e-9));
  }

  @Test
  void ignores_a_slowdown_that_falls_on_both_runs_of_a_pair() {
    // The machine is three times slower during the second pair; each pair still says 0.8.
    List<Double> baseline = List.of(1.0, 3.0, 1.0, 1.0);
    List<Double> variant = List.of(1.25, 3.75, 1.25, 1.25);
    assertThat(BenchmarkRun.pairedRatio(baseline, variant)).isCloseTo(0.8, within(1e-9));
  }
}
