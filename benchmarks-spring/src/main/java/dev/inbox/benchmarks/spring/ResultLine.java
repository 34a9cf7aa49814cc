package dev.inbox.benchmarks.spring;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The one JSON line of an invocation, with the field names of the benchmarks module's lines: the
 * {@code inbox} variant's {@code seconds}, {@code msgs_per_s} and {@code run_seconds}, the same of
 * {@code plain} prefixed {@code plain_}, {@code ratio} (of the median rates), {@code paired_ratio}
 * (the median over runs of plain's seconds over the inbox's, run i against run i), {@code target}
 * and {@code correct}; {@code listener} says which listener method both variants ran.
 */
final class ResultLine {
  private final SpringKafkaScenario.Options options;
  private final SpringKafkaScenario.Runs plain;
  private final SpringKafkaScenario.Runs inbox;
  private final double loadBefore;
  private final double loadAfter;

  ResultLine(
      SpringKafkaScenario.Options options,
      SpringKafkaScenario.Runs plain,
      SpringKafkaScenario.Runs inbox,
      double loadBefore,
      double loadAfter) {
    this.options = options;
    this.plain = plain;
    this.inbox = inbox;
    this.loadBefore = loadBefore;
    this.loadAfter = loadAfter;
  }

  boolean correct() {
    return plain.correct() && inbox.correct();
  }

  double ratio() {
    return median(plain.seconds()) / median(inbox.seconds());
  }

  double pairedRatio() {
    double[] ratios = new double[Math.min(plain.seconds().size(), inbox.seconds().size())];
    for (int i = 0; i < ratios.length; i++) {
      ratios[i] = plain.seconds().get(i) / inbox.seconds().get(i);
    }
    return median(Arrays.stream(ratios).boxed().toList());
  }

  @Override
  public String toString() {
    return "{"
        + string("scenario", SpringKafkaScenario.NAME)
        + ","
        + string("variant", "inbox")
        + ","
        + string("baseline", "plain")
        + ","
        + field("messages", options.messages())
        + ","
        + field("duplicate_rate", decimal(options.duplicateRate(), 2))
        + ","
        + field("partitions", 1)
        + ","
        + string("listener", options.listener().label())
        + ","
        + field("runs", options.runs())
        + ","
        + field("warmup", options.warmup())
        + ","
        + field("seconds", decimal(median(inbox.seconds()), 3))
        + ","
        + field("msgs_per_s", decimal(rate(inbox), 0))
        + ","
        + field("run_seconds", decimals(inbox.seconds()))
        + ","
        + field("plain_seconds", decimal(median(plain.seconds()), 3))
        + ","
        + field("plain_msgs_per_s", decimal(rate(plain), 0))
        + ","
        + field("plain_run_seconds", decimals(plain.seconds()))
        + ","
        + field("ratio", decimal(ratio(), 3))
        + ","
        + field("paired_ratio", decimal(pairedRatio(), 3))
        + ","
        + field("target", decimal(SpringKafkaScenario.TARGET, 2))
        + ","
        + field("load_average_start", decimal(loadBefore, 2))
        + ","
        + field("load_average_end", decimal(loadAfter, 2))
        + ","
        + field("correct", correct())
        + "}";
  }

  private double rate(SpringKafkaScenario.Runs runs) {
    return options.messages() / median(runs.seconds());
  }

  private static String string(String name, String value) {
    return field(name, '"' + value + '"');
  }

  private static String field(String name, Object value) {
    return '"' + name + "\":" + value;
  }

  private static String decimal(double value, int digits) {
    return String.format(Locale.ROOT, "%." + digits + "f", value);
  }

  private static String decimals(List<Double> values) {
    return values.stream().map(v -> decimal(v, 3)).collect(Collectors.joining(",", "[", "]"));
  }

  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
