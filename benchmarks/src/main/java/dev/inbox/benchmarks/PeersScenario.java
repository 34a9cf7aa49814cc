package dev.inbox.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The {@code peers} scenario: the same payments through other deduplicating consumers, one message
 * per transaction as each is meant to be used, against the inbox at batch sizes 1 and 100 measured
 * in the same run. Each peer works in a schema of its own, reset before every run.
 */
final class PeersScenario {
  /** The inbox batch size the peers are compared with; the target is 10 times each peer. */
  static final int BASELINE_BATCH = 100;

  /** Builds a peer on a freshly reset schema. */
  @FunctionalInterface
  interface Factory {
    Peer create(DataSource dataSource, PaymentsSchema payments) throws Exception;
  }

  /** Every peer by its variant name, in the order they run. */
  static final Map<String, Factory> PEERS = new LinkedHashMap<>();

  static {
    PEERS.put("camel", CamelPeer::new);
    PEERS.put("spring-integration", SpringIntegrationPeer::new);
    PEERS.put("on-conflict", OnConflictPeer::new);
  }

  private final DataSource dataSource;
  private final Workload workload;
  private final CoreScenario inbox;

  PeersScenario(DataSource dataSource, Workload workload) {
    this.dataSource = dataSource;
    this.workload = workload;
    this.inbox = new CoreScenario(dataSource, workload, "bench_peers_inbox");
  }

  /**
   * The inbox at batch 100 first, as the baseline of the ratios, then at batch 1, then each peer.
   */
  boolean runAll(BenchmarkRun run) throws Exception {
    boolean atOnce = run.options.handlerAtOnce();
    BenchmarkRun.Repeated batch100 = run.repeat(() -> inbox.run("inbox", BASELINE_BATCH, atOnce));
    double baseline = rate(batch100);
    boolean allCorrect = print(run, "inbox", BASELINE_BATCH, batch100, baseline);
    allCorrect &= print(run, "inbox", 1, run.repeat(() -> inbox.run("inbox", 1, atOnce)), baseline);
    for (String peer : PEERS.keySet()) {
      allCorrect &= print(run, peer, 1, run.repeat(() -> run(peer)), baseline);
    }
    return allCorrect;
  }

  /** One timed run of one peer, checked afterwards; building the peer is not timed. */
  Measurement run(String peer) throws Exception {
    PaymentsSchema payments = new PaymentsSchema("bench_peer_" + peer.replace('-', '_'));
    payments.reset(dataSource);
    try (Peer consumer = PEERS.get(peer).create(dataSource, payments)) {
      long start = System.nanoTime();
      for (Workload.Payment payment : workload.messages) {
        consumer.consume(payment);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      return new Measurement(seconds, payments.correct(dataSource, workload));
    }
  }

  private boolean print(
      BenchmarkRun run,
      String variant,
      int batchSize,
      BenchmarkRun.Repeated result,
      double inboxBatch100) {
    double rate = rate(result);
    run.print(
        JsonLine.scenario("peers")
            .put("handler", run.options.handler)
            .put("variant", variant)
            .put("batch_size", batchSize)
            .put("messages", workload.messages.size())
            .put("duplicate_rate", run.options.duplicateRate, 2)
            .put("runs", run.options.runs)
            .put("seconds", result.medianSeconds(), 3)
            .put("msgs_per_s", rate, 0)
            .put("ratio_vs_inbox_batch100", rate / inboxBatch100, 3)
            .put("run_seconds", result.runSeconds(), 3)
            .put("correct", result.correct()));
    return result.correct();
  }

  private double rate(BenchmarkRun.Repeated result) {
    return workload.messages.size() / result.medianSeconds();
  }
}
