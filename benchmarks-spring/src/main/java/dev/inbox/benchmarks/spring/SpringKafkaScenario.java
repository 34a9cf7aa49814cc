package dev.inbox.benchmarks.spring;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The {@code spring-kafka} scenario. The workload is produced once to a fresh one-partition topic;
 * each run then boots {@link BenchmarkApplication} on a freshly reset schema with a new consumer
 * group reading from the earliest offset, waits until the last offset is committed, and checks the
 * payments. {@code inbox} runs with the starter's interception, {@code plain} with {@code
 * inbox.listeners.enabled=false}; every other property is the same. The variants take turns run by
 * run (plain, inbox, plain, inbox, ...), so that outside load falls on both alike.
 */
final class SpringKafkaScenario {
  static final String NAME = "spring-kafka";
  static final List<String> VARIANTS = List.of("plain", "inbox");

  /** What issue 20 asks of the inbox under @KafkaListener: at least this share of plain's rate. */
  static final double TARGET = 0.85;

  private static final Duration RUN_TIMEOUT = Duration.ofMinutes(10);

  /** What one invocation measures, and where. */
  record Options(
      String jdbcUrl,
      String user,
      String password,
      String bootstrapServers,
      String schema,
      int messages,
      double duplicateRate,
      int runs,
      int warmup,
      long seed,
      Listener listener) {}

  /**
   * The listener method both variants run: one record per call ({@code record}), or a poll's
   * records per call ({@code batch}), each in one transaction with the same writes per payment.
   */
  enum Listener {
    RECORD,
    BATCH;

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** One variant's timed runs, in order, and whether every one of them checked out. */
  record Runs(List<Double> seconds, boolean correct) {}

  private final Options options;
  private final Workload workload;
  private final PaymentsTables tables;
  private final JdbcTemplate jdbc;
  private final String topic;

  private SpringKafkaScenario(Options options, Workload workload, String topic) {
    this.options = options;
    this.workload = workload;
    this.tables = new PaymentsTables(options.schema());
    this.jdbc =
        new JdbcTemplate(
            new DriverManagerDataSource(options.jdbcUrl(), options.user(), options.password()));
    this.topic = topic;
  }

  /** Produces the workload to a fresh topic, measures both variants and returns the JSON line. */
  static ResultLine run(Options options, BenchmarkKafka kafka) throws Exception {
    double loadBefore = loadAverage();
    Workload workload = new Workload(options.messages(), options.duplicateRate(), options.seed());
    String topic = kafka.newTopic("bench-spring-kafka");
    kafka.produce(topic, workload);
    SpringKafkaScenario scenario = new SpringKafkaScenario(options, workload, topic);
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    Map<String, Boolean> correct = new LinkedHashMap<>();
    VARIANTS.forEach(variant -> seconds.put(variant, new ArrayList<>()));
    for (int i = 0; i < options.warmup(); i++) {
      for (String variant : VARIANTS) {
        // Unmeasured, but checked: a wrong warm-up run fails the benchmark too.
        correct.merge(variant, scenario.timedRun(variant).correct(), Boolean::logicalAnd);
      }
    }
    for (int i = 0; i < options.runs(); i++) {
      for (String variant : VARIANTS) {
        Measurement m = scenario.timedRun(variant);
        seconds.get(variant).add(m.seconds());
        correct.merge(variant, m.correct(), Boolean::logicalAnd);
      }
    }
    return new ResultLine(
        options,
        new Runs(seconds.get("plain"), correct.getOrDefault("plain", true)),
        new Runs(seconds.get("inbox"), correct.getOrDefault("inbox", true)),
        loadBefore,
        loadAverage());
  }

  /** One run's time, and whether its effects checked out afterwards. */
  record Measurement(double seconds, boolean correct) {}

  Measurement timedRun(String variant) throws Exception {
    tables.reset(jdbc);
    RunProgress progress = new RunProgress(workload.messages.size());
    try (ConfigurableApplicationContext context = start(variant, progress)) {
      if (!progress.awaitDone(RUN_TIMEOUT)) {
        throw new IllegalStateException(
            "the "
                + variant
                + " listener did not commit all records of "
                + topic
                + " in "
                + RUN_TIMEOUT);
      }
    }
    Measurement measurement = new Measurement(progress.seconds(), tables.correct(jdbc, workload));
    // Progress for whoever watches a long invocation; stdout is for the JSON line only.
    System.err.printf(
        Locale.ROOT,
        "%s run: %.3f s, %s, load average %.2f%n",
        variant,
        measurement.seconds(),
        measurement.correct() ? "correct" : "WRONG",
        loadAverage());
    return measurement;
  }

  private ConfigurableApplicationContext start(String variant, RunProgress progress) {
    Map<String, Object> properties = new HashMap<>();
    properties.put("spring.datasource.url", options.jdbcUrl());
    if (options.user() != null) {
      properties.put("spring.datasource.username", options.user());
    }
    if (options.password() != null) {
      properties.put("spring.datasource.password", options.password());
    }
    properties.put("spring.kafka.bootstrap-servers", options.bootstrapServers());
    properties.put(
        "spring.kafka.consumer.group-id", "bench-spring-" + variant + "-" + UUID.randomUUID());
    properties.put("spring.kafka.consumer.auto-offset-reset", "earliest");
    properties.put("spring.kafka.consumer.enable-auto-commit", "false");
    properties.put("spring.kafka.consumer.max-poll-records", "500");
    properties.put(
        "spring.kafka.consumer.key-deserializer",
        "org.apache.kafka.common.serialization.StringDeserializer");
    properties.put(
        "spring.kafka.consumer.value-deserializer",
        "org.apache.kafka.common.serialization.ByteArrayDeserializer");
    properties.put("spring.kafka.listener.concurrency", "1");
    properties.put("spring.kafka.listener.ack-mode", "batch");
    properties.put("inbox.schema", options.schema());
    properties.put("inbox.janitor-interval", "0s");
    properties.put("inbox.listeners.enabled", Boolean.toString(variant.equals("inbox")));
    properties.put("bench.topic", topic);
    properties.put("bench.listener", options.listener().label());
    return new SpringApplicationBuilder(BenchmarkApplication.class)
        .web(WebApplicationType.NONE)
        .bannerMode(Banner.Mode.OFF)
        .logStartupInfo(false)
        .properties(properties)
        .initializers(
            context -> context.getBeanFactory().registerSingleton("runProgress", progress))
        .run();
  }

  private static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
