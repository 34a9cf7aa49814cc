package dev.inbox.benchmarks.spring;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code java -jar benchmarks-spring/target/inbox-benchmarks-spring.jar --help}. */
@Command(
    name = "inbox-benchmarks-spring",
    mixinStandardHelpOptions = true,
    description =
        "Measures a @KafkaListener with the inbox starter against the same listener without it and"
            + " prints one JSON line; exits 1 if any run's effects were wrong.")
public final class SpringKafkaBenchmark implements Callable<Integer> {
  @Option(
      names = "--jdbc-url",
      defaultValue = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
      description = "PostgreSQL to measure on (default: ${DEFAULT-VALUE}).")
  String jdbcUrl;

  @Option(
      names = "--schema",
      defaultValue = "bench_spring_kafka",
      description =
          "Schema of the payments and inbox tables, dropped and created for every run (default:"
              + " ${DEFAULT-VALUE}).")
  String schema;

  @Option(
      names = "--bootstrap-servers",
      description = "Kafka to measure on (default: a one-node KRaft broker in this JVM).")
  String bootstrapServers;

  @Option(
      names = "--messages",
      defaultValue = "20000",
      description = "Payments per run, re-sends included (default: ${DEFAULT-VALUE}).")
  int messages;

  @Option(
      names = "--duplicate-rate",
      defaultValue = "0.2",
      description = "Fraction of re-sends (default: ${DEFAULT-VALUE}).")
  double duplicateRate;

  @Option(
      names = "--runs",
      defaultValue = "5",
      description = "Measured runs of each variant, taking turns (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(
      names = "--warmup",
      defaultValue = "1",
      description = "Unmeasured runs of each variant first (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--seed",
      defaultValue = "42",
      description = "Workload seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--listener",
      defaultValue = "record",
      converter = ListenerConverter.class,
      description =
          "The @KafkaListener both variants run: record (one record per call) or batch (a"
              + " poll's records per call, batch = \"true\"); default: ${DEFAULT-VALUE}.")
  SpringKafkaScenario.Listener listener;

  /** {@code record} or {@code batch}, as the JSON line spells them. */
  static final class ListenerConverter
      implements CommandLine.ITypeConverter<SpringKafkaScenario.Listener> {
    @Override
    public SpringKafkaScenario.Listener convert(String value) {
      for (SpringKafkaScenario.Listener listener : SpringKafkaScenario.Listener.values()) {
        if (listener.label().equals(value)) {
          return listener;
        }
      }
      throw new CommandLine.TypeConversionException(
          "--listener must be record or batch, not '" + value + "'");
    }
  }

  @Override
  public Integer call() throws Exception {
    if (runs < 1 || warmup < 0 || messages < 1 || duplicateRate < 0 || duplicateRate >= 1) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "need --runs >= 1, --warmup >= 0, --messages >= 1 and 0 <= --duplicate-rate < 1");
    }
    BenchmarkKafka kafka = BenchmarkKafka.open(bootstrapServers);
    ResultLine line =
        SpringKafkaScenario.run(
            new SpringKafkaScenario.Options(
                jdbcUrl,
                null,
                null,
                kafka.bootstrapServers(),
                schema,
                messages,
                duplicateRate,
                runs,
                warmup,
                seed,
                listener),
            kafka);
    System.out.println(line);
    System.out.flush();
    return line.correct() ? 0 : 1;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new SpringKafkaBenchmark()).execute(args));
  }
}
