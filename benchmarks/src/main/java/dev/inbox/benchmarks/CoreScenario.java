package dev.inbox.benchmarks;

import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchHandler;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.ItemStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The {@code core} scenario: an in-memory source feeding batches to the inbox's batch claim,
 * against {@code nodedup}, the same business writes in the same batches and transactions with
 * duplicates filtered by an in-memory set: the upper bound.
 */
final class CoreScenario {
  private final DataSource dataSource;
  private final Workload workload;
  private final PaymentsSchema payments;

  CoreScenario(DataSource dataSource, Workload workload) {
    this(dataSource, workload, "bench_core");
  }

  /** On the given schema, so that another scenario can measure the inbox beside its peers. */
  CoreScenario(DataSource dataSource, Workload workload, String schema) {
    this.dataSource = dataSource;
    this.workload = workload;
    this.payments = new PaymentsSchema(schema);
  }

  /** Every batch size, {@code nodedup} first as the baseline of the same run. */
  boolean runAll(BenchmarkRun run) throws Exception {
    boolean allCorrect = true;
    for (int batchSize : run.options.batchSizes) {
      // Run by run in turns: commit latency on a shared disk drifts, and must fall on both alike.
      allCorrect &=
          run.printThroughput(
              JsonLine.scenario("core").put("handler", run.options.handler),
              "batch_size",
              batchSize,
              "ratio_vs_nodedup",
              InterleavedRuns.repeat(
                  run,
                  List.of("nodedup", "inbox"),
                  variant -> run(variant, batchSize, run.options.handlerAtOnce())));
    }
    return allCorrect;
  }

  /**
   * One timed run of one variant, checked afterwards.
   *
   * @param atOnce whether each batch's new payments are written by one set-based statement
   */
  Measurement run(String variant, int batchSize, boolean atOnce) throws Exception {
    payments.reset(dataSource);
    if (variant.equals("inbox")) {
      InboxSettings settings =
          InboxSettings.builder().schema(payments.schema).janitorInterval(Duration.ZERO).build();
      try (Inbox inbox =
          Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build()) {
        long start = System.nanoTime();
        runInbox(inbox, batchSize, atOnce);
        return new Measurement(
            (System.nanoTime() - start) / 1e9, payments.correct(dataSource, workload));
      }
    }
    long start = System.nanoTime();
    runNoDedup(batchSize, atOnce);
    return new Measurement(
        (System.nanoTime() - start) / 1e9, payments.correct(dataSource, workload));
  }

  private void runInbox(Inbox inbox, int batchSize, boolean atOnce) {
    List<Workload.Payment> messages = workload.messages;
    for (int from = 0; from < messages.size(); from += batchSize) {
      List<BatchItem<Workload.Payment>> items = new ArrayList<>(batchSize);
      for (Workload.Payment payment :
          messages.subList(from, Math.min(from + batchSize, messages.size()))) {
        items.add(BatchItem.of(payment.id(), payment));
      }
      BatchHandler<Workload.Payment> handler =
          atOnce
              ? BatchHandler.setBased(
                  (newItems, tx) ->
                      payments.applyAll(tx, newItems.stream().map(BatchItem::payload).toList()))
              : (item, tx) -> {
                payments.apply(tx, item.payload());
                return null;
              };
      BatchResult<Workload.Payment> result =
          inbox.executeBatch("bench", items, BatchFailurePolicy.CONTINUE, handler);
      if (result.count(ItemStatus.COMPLETED) + result.count(ItemStatus.DUPLICATE) != items.size()) {
        throw new IllegalStateException("unsettled items in a batch: " + result.counts());
      }
    }
  }

  private void runNoDedup(int batchSize, boolean atOnce) throws SQLException {
    Set<String> seen = new HashSet<>();
    List<Workload.Payment> messages = workload.messages;
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      for (int from = 0; from < messages.size(); from += batchSize) {
        List<Workload.Payment> fresh = new ArrayList<>();
        for (Workload.Payment payment :
            messages.subList(from, Math.min(from + batchSize, messages.size()))) {
          if (seen.add(payment.id())) {
            fresh.add(payment);
          }
        }
        if (atOnce && !fresh.isEmpty()) {
          payments.applyAll(tx, fresh);
        } else {
          for (Workload.Payment payment : fresh) {
            payments.apply(tx, payment);
          }
        }
        tx.commit();
      }
    }
  }
}
