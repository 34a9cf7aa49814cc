package dev.inbox.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.InboxDataSources;
import dev.inbox.Storage;
import dev.inbox.rabbit.InboxRabbitConsumer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
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
    description =
        "Throughput and latency of the inbox against a no-deduplication baseline and its peers,"
            + " as JSON lines.")
public final class InboxBenchmarks implements Callable<Integer> {
  /** Every scenario by its {@code --scenario} name, in the order the help lists them. */
  static final Map<String, Scenario> SCENARIOS = new LinkedHashMap<>();

  static {
    SCENARIOS.put("core", run -> new CoreScenario(run.dataSource, run.workload).runAll(run));
    SCENARIOS.put("kafka", KafkaScenario::runAll);
    SCENARIOS.put("rabbit", RabbitScenario::runAll);
    SCENARIOS.put("http", HttpScenario::runAll);
    SCENARIOS.put("memory", MemoryScenario::runAll);
    SCENARIOS.put("peers", run -> new PeersScenario(run.dataSource, run.workload).runAll(run));
    SCENARIOS.put("scale", ScaleScenario::run);
  }

  @Option(
      names = "--jdbc-url",
      defaultValue = "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres",
      description = "PostgreSQL to measure on (default: ${DEFAULT-VALUE}).")
  String jdbcUrl;

  @Option(
      names = "--bootstrap-servers",
      description = "Kafka for the kafka and memory scenarios (default: an in-JVM KRaft broker).")
  String bootstrapServers;

  @Option(
      names = "--amqp-uri",
      defaultValue = "amqp://guest:guest@127.0.0.1:5672/%2F",
      description = "RabbitMQ for the rabbit scenario (default: ${DEFAULT-VALUE}).")
  String amqpUri;

  @Option(
      names = "--prefetch",
      defaultValue = "" + InboxRabbitConsumer.DEFAULT_PREFETCH,
      description =
          "Prefetch, and so the largest batch, of both rabbit variants (default: ${DEFAULT-VALUE},"
              + " the adapter's default).")
  int prefetch;

  @Option(
      names = "--scenario",
      defaultValue = "core",
      split = ",",
      description = "Scenarios to run, comma-separated (default: ${DEFAULT-VALUE}).")
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
      names = "--scale-rows",
      defaultValue = "0,1000000,10000000",
      split = ",",
      description =
          "Pre-filled inbox rows of the scale scenario; the first is the baseline of the ratio"
              + " (default: ${DEFAULT-VALUE}).")
  List<Long> scaleRows;

  @Option(
      names = "--scale-claims",
      defaultValue = "5000",
      description =
          "Timed single claims per size of the scale scenario (default: ${DEFAULT-VALUE}).")
  int scaleClaims;

  @Option(
      names = "--purge-rows",
      defaultValue = "1000000",
      description =
          "Expired rows the scale scenario purges while claims go on (default: ${DEFAULT-VALUE}).")
  long purgeRows;

  @Option(
      names = "--scale-storage",
      defaultValue = "table",
      split = ",",
      description =
          "Storages the scale scenario measures, each on its own: table, partitioned (default:"
              + " ${DEFAULT-VALUE}).")
  List<String> scaleStorage;

  /** {@code --scale-storage} as storages, once {@link #call} has checked it. */
  List<Storage> scaleStorages = List.of();

  @Option(
      names = "--scale-claimers",
      defaultValue = "1",
      description =
          "Threads that claim during the scale scenario's purge (default: ${DEFAULT-VALUE}).")
  int scaleClaimers;

  @Option(
      names = "--scale-generations",
      defaultValue = "5",
      description =
          "Generations the partitioned storage's rows are spread over for the scale scenario's"
              + " claims (default: ${DEFAULT-VALUE}: a day's rows at one rotation per quarter"
              + " of the 24-hour retention).")
  int scaleGenerations;

  @Option(
      names = "--scale-week-rows-per-day",
      defaultValue = "0",
      description =
          "Keys per simulated day of the scale scenario's week of traffic on each storage; 0"
              + " skips it (default: ${DEFAULT-VALUE}).")
  long weekRowsPerDay;

  @Option(
      names = "--scale-consumers",
      split = ",",
      description =
          "Instance counts of one consumer group of the scale scenario's consumers' scaling,"
              + " such as 1,2,3,4, each on the same topic of as many partitions as the largest"
              + " count; --messages per count (default: none, skipped).")
  List<Integer> scaleConsumers = List.of();

  @Option(
      names = "--scale-consumers-writes",
      defaultValue = WRITES_PAYMENT_AND_BALANCE,
      description =
          "What the consumers' scaling writes per new payment: "
              + WRITES_PAYMENT_AND_BALANCE
              + " (the kafka scenario's writes, --handler applies) or "
              + WRITES_PAYMENT
              + " (the payment's row only, per record: no two instances wait for each other's"
              + " rows) (default: ${DEFAULT-VALUE}).")
  String scaleConsumersWrites;

  static final String WRITES_PAYMENT_AND_BALANCE = "payment-and-balance";
  static final String WRITES_PAYMENT = "payment";

  @Option(
      names = "--handler",
      defaultValue = HANDLER_PER_ITEM,
      description =
          "How the inbox and its baseline in the core, peers, kafka and rabbit scenarios write"
              + " the new payments of a batch: "
              + HANDLER_PER_ITEM
              + " (executeBatch, an INSERT and an UPDATE per payment) or "
              + HANDLER_AT_ONCE
              + " (executeBatch with BatchHandler.setBased, one set-based statement per batch) (default:"
              + " ${DEFAULT-VALUE}).")
  String handler;

  static final String HANDLER_PER_ITEM = "per-item";
  static final String HANDLER_AT_ONCE = "at-once";

  /** Whether {@code --handler} asks for one set-based write per batch. */
  boolean handlerAtOnce() {
    return handler.equals(HANDLER_AT_ONCE);
  }

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

  /**
   * Four connections, or more for the scale scenario's claimers during the purge, its observer and
   * the purge itself, and for its consumers' instances.
   */
  int poolSize() {
    int consumers = scaleConsumers.stream().mapToInt(Integer::intValue).max().orElse(0);
    return Math.max(4, Math.max(scaleClaimers + 2, consumers + 1));
  }

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
    if (prefetch < 1 || prefetch > 65_535) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "need 1 <= --prefetch <= 65535 (AMQP's prefetch count is 16 bits), but got " + prefetch);
    }
    if (scaleClaims < 1 || purgeRows < 0 || scaleRows.stream().anyMatch(rows -> rows < 0)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "need --scale-claims >= 1, --purge-rows >= 0 and every --scale-rows >= 0, but got "
              + scaleClaims
              + ", "
              + purgeRows
              + " and "
              + scaleRows);
    }
    scaleStorages = new ArrayList<>();
    for (String storage : scaleStorage) {
      try {
        scaleStorages.add(Storage.valueOf(storage.toUpperCase(Locale.ROOT)));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(
            new CommandLine(this),
            "unknown --scale-storage '" + storage + "'; known: table, partitioned");
      }
    }
    if (scaleClaimers < 1
        || scaleGenerations < 1
        || weekRowsPerDay < 0
        || scaleConsumers.stream().anyMatch(n -> n < 1)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "need --scale-claimers >= 1, --scale-generations >= 1, --scale-week-rows-per-day >= 0"
              + " and every --scale-consumers >= 1, but got "
              + scaleClaimers
              + ", "
              + scaleGenerations
              + ", "
              + weekRowsPerDay
              + " and "
              + scaleConsumers);
    }
    if (!scaleConsumersWrites.equals(WRITES_PAYMENT_AND_BALANCE)
        && !scaleConsumersWrites.equals(WRITES_PAYMENT)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "unknown --scale-consumers-writes '"
              + scaleConsumersWrites
              + "'; known: "
              + WRITES_PAYMENT_AND_BALANCE
              + ", "
              + WRITES_PAYMENT);
    }
    if (!handler.equals(HANDLER_PER_ITEM) && !handler.equals(HANDLER_AT_ONCE)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "unknown --handler '"
              + handler
              + "'; known: "
              + HANDLER_PER_ITEM
              + ", "
              + HANDLER_AT_ONCE);
    }
    for (String scenario : scenarios) {
      if (!SCENARIOS.containsKey(scenario)) {
        throw new CommandLine.ParameterException(
            new CommandLine(this),
            "unknown --scenario '"
                + scenario
                + "'; known: "
                + String.join(", ", SCENARIOS.keySet()));
      }
    }
    Workload workload = new Workload(messages, duplicateRate, seed);
    boolean allCorrect = true;
    try (HikariDataSource dataSource = InboxDataSources.pool(jdbcUrl, null, null, poolSize())) {
      BenchmarkRun run = new BenchmarkRun(this, dataSource, workload);
      for (String scenario : scenarios) {
        allCorrect &= SCENARIOS.get(scenario).run(run);
      }
    }
    return allCorrect ? 0 : 1;
  }
}
