package dev.inbox.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * The {@code memory} scenario: the kafka-adapter consumes the whole workload (run it with {@code
 * --messages 1000000}) in a child JVM with a {@value #HEAP} heap, {@link MemoryConsumerMain}, which
 * reports the heap in use after a full GC about every 1% of the records. A consumer that keeps
 * nothing per record shows a flat line; one that leaks grows until it dies of OutOfMemoryError.
 */
final class MemoryScenario {
  static final String HEAP = "256m";

  private static final long TIMEOUT_MINUTES = 60;

  private final DataSource dataSource;
  private final Workload workload;
  private final String jdbcUrl;
  private final PaymentsSchema payments = new PaymentsSchema("bench_memory");

  MemoryScenario(DataSource dataSource, Workload workload, String jdbcUrl) {
    this.dataSource = dataSource;
    this.workload = workload;
    this.jdbcUrl = jdbcUrl;
  }

  /** What the child reported, and how it ended. */
  record Result(List<long[]> samples, double seconds, boolean oom, int exitCode, boolean correct) {

    /** The last sample at or before the given fraction of the records, in MiB. */
    double heapMbAt(double fraction, long total) {
      long[] chosen = samples.get(0);
      for (long[] sample : samples) {
        if (sample[0] <= fraction * total) {
          chosen = sample;
        }
      }
      return chosen[1] / (1024.0 * 1024.0);
    }

    double maxHeapMb() {
      return samples.stream().mapToLong(s -> s[1]).max().orElse(0) / (1024.0 * 1024.0);
    }
  }

  static boolean runAll(BenchmarkRun run) throws Exception {
    try (BenchmarkKafka kafka = BenchmarkKafka.open(run.options.bootstrapServers)) {
      String topic = kafka.newTopic("bench-memory", KafkaScenario.PARTITIONS);
      try {
        kafka.produce(topic, run.workload);
        MemoryScenario scenario =
            new MemoryScenario(run.dataSource, run.workload, run.options.jdbcUrl);
        Result result = scenario.run(kafka.bootstrapServers(), topic);
        long total = run.workload.messages.size();
        run.print(
            JsonLine.scenario("memory")
                .put("variant", "inbox")
                .put("heap", HEAP)
                .put("messages", total)
                .put("duplicate_rate", run.options.duplicateRate, 2)
                .put("runs", 1)
                .put("seconds", result.seconds(), 3)
                .put("msgs_per_s", result.seconds() > 0 ? total / result.seconds() : 0, 0)
                .put("samples", result.samples().size())
                .put("max_heap_mb", result.maxHeapMb(), 2)
                .put("heap_mb_0", result.heapMbAt(0, total), 2)
                .put("heap_mb_25", result.heapMbAt(0.25, total), 2)
                .put("heap_mb_50", result.heapMbAt(0.50, total), 2)
                .put("heap_mb_75", result.heapMbAt(0.75, total), 2)
                .put("heap_mb_100", result.heapMbAt(1.0, total), 2)
                .put(
                    "growth_mb_25_to_100",
                    result.heapMbAt(1.0, total) - result.heapMbAt(0.25, total),
                    2)
                .put("oom", result.oom())
                .put("exit_code", result.exitCode())
                .put("correct", result.correct()));
        return result.correct() && !result.oom();
      } finally {
        kafka.deleteTopic(topic);
      }
    }
  }

  /** Consumes the topic in a child JVM and checks the payments afterwards. */
  Result run(String bootstrapServers, String topic) throws Exception {
    payments.reset(dataSource);
    ProcessBuilder builder =
        new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx" + HEAP,
            "-XX:+ExitOnOutOfMemoryError",
            "-cp",
            System.getProperty("java.class.path"),
            MemoryConsumerMain.class.getName(),
            bootstrapServers,
            topic,
            jdbcUrl,
            payments.schema,
            Long.toString(workload.messages.size()));
    Process child = builder.start();
    Deque<String> errors = new ArrayDeque<>();
    Thread stderr = new Thread(() -> keepTail(child, errors), "memory-child-stderr");
    stderr.start();
    List<long[]> samples = new ArrayList<>();
    double seconds = 0;
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        String[] parts = line.split(" ");
        if (parts[0].equals("heap") && parts.length == 3) {
          samples.add(new long[] {Long.parseLong(parts[1]), Long.parseLong(parts[2])});
        } else if (parts[0].equals("done") && parts.length == 2) {
          seconds = Double.parseDouble(parts[1]);
        }
      }
    }
    if (!child.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
      child.destroyForcibly();
      throw new IllegalStateException("the memory child did not finish in " + TIMEOUT_MINUTES);
    }
    stderr.join();
    int exitCode = child.exitValue();
    boolean oom;
    synchronized (errors) {
      oom = errors.stream().anyMatch(line -> line.contains("OutOfMemoryError"));
      if (exitCode != 0 && !oom) {
        throw new IllegalStateException(
            "the memory child failed with exit code "
                + exitCode
                + ":\n"
                + String.join("\n", errors));
      }
    }
    if (samples.isEmpty()) {
      samples.add(new long[] {0, 0});
    }
    boolean correct = exitCode == 0 && payments.correct(dataSource, workload);
    return new Result(samples, seconds, oom, exitCode, correct);
  }

  /** Keeps the last 50 lines of the child's stderr, for the error message and the OOM check. */
  private static void keepTail(Process child, Deque<String> errors) {
    try (BufferedReader err =
        new BufferedReader(new InputStreamReader(child.getErrorStream(), StandardCharsets.UTF_8))) {
      for (String line = err.readLine(); line != null; line = err.readLine()) {
        synchronized (errors) {
          errors.addLast(line);
          if (errors.size() > 50) {
            errors.removeFirst();
          }
        }
      }
    } catch (IOException e) {
      // The child is gone; what was read is what there is.
    }
  }
}
