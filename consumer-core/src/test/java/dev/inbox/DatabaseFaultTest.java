package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Batches from four competing workers while their PostgreSQL backends are terminated at random. A
 * worker that loses its connection retries the batch, as a redelivering broker would. Whatever
 * fails, every distinct payment takes effect exactly once.
 */
class DatabaseFaultTest extends InboxTestSupport {

  @Test
  void terminated_backends_during_concurrent_batches_lose_nothing_and_double_nothing()
      throws Exception {
    run(8_000, 10, 1234L);
  }

  @Test
  @Tag("faults")
  void long_run_with_many_terminated_backends() throws Exception {
    run(100_000, 40, System.nanoTime());
  }

  private void run(int messages, int terminations, long seed) throws Exception {
    System.out.println("DatabaseFaultTest seed=" + seed + " messages=" + messages);
    Inbox inbox = inbox();
    Random random = new Random(seed);
    List<String> sends = new ArrayList<>();
    Map<String, Long> amounts = new HashMap<>();
    for (int i = 0; i < messages; i++) {
      String key;
      if (!amounts.isEmpty() && random.nextDouble() < 0.2) {
        key = sends.get(random.nextInt(sends.size()));
      } else {
        key = "pay-" + i;
        amounts.put(key, 1L + random.nextInt(1000));
      }
      sends.add(key);
    }
    ConcurrentLinkedQueue<List<String>> work = new ConcurrentLinkedQueue<>();
    for (int i = 0; i < sends.size(); i += 50) {
      work.add(sends.subList(i, Math.min(sends.size(), i + 50)));
    }
    AtomicInteger databaseErrors = new AtomicInteger();
    AtomicBoolean done = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(5);
    List<Future<?>> workers = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      workers.add(
          pool.submit(
              () -> {
                List<String> batch;
                while ((batch = work.poll()) != null) {
                  processUntilSettled(inbox, batch, amounts, databaseErrors);
                }
                return null;
              }));
    }
    Future<Integer> killer =
        pool.submit(
            () -> {
              int killed = 0;
              while (killed < terminations && !done.get()) {
                Thread.sleep(20 + random.nextInt(60));
                killed += terminateInboxBackends();
              }
              return killed;
            });
    for (Future<?> worker : workers) {
      worker.get(5, TimeUnit.MINUTES);
    }
    done.set(true);
    int killed = killer.get(1, TimeUnit.MINUTES);
    pool.shutdown();

    long expectedSum = amounts.values().stream().mapToLong(Long::longValue).sum();
    System.out.printf(
        "terminated backends=%d, database errors seen=%d, distinct=%d%n",
        killed, databaseErrors.get(), amounts.size());
    assertThat(killed).as("backends terminated during the run").isPositive();
    assertThat(effects()).as("effect rows == distinct keys").isEqualTo(amounts.size());
    assertThat(queryLong("SELECT count(DISTINCT key) FROM " + schema + ".effects"))
        .isEqualTo(amounts.size());
    assertThat(queryLong("SELECT coalesce(sum(amount), 0) FROM " + schema + ".effects"))
        .as("sum of amounts")
        .isEqualTo(expectedSum);
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE state <> 'COMPLETED'"))
        .as("records not completed")
        .isZero();
  }

  private void processUntilSettled(
      Inbox inbox, List<String> keys, Map<String, Long> amounts, AtomicInteger databaseErrors) {
    List<BatchItem<Long>> pending = new ArrayList<>();
    keys.forEach(k -> pending.add(BatchItem.of(k, amounts.get(k))));
    while (!pending.isEmpty()) {
      try {
        BatchResult<Long> result =
            inbox.executeBatch(
                "payments",
                List.copyOf(pending),
                BatchFailurePolicy.CONTINUE,
                (item, tx) -> {
                  effect(tx, "payments", item.key(), item.payload());
                  return null;
                });
        pending.clear();
        result.items().stream()
            .filter(r -> !r.status().isSettled())
            .forEach(r -> pending.add(r.item()));
        if (!pending.isEmpty()) {
          Thread.sleep(10);
        }
      } catch (InboxDatabaseException e) {
        databaseErrors.incrementAndGet();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Terminates one random backend of the test's pool that is inside a transaction. */
  private int terminateInboxBackends() throws SQLException {
    try (Connection c =
            java.sql.DriverManager.getConnection(
                dev.inbox.testing.TestDatabase.shared().jdbcUrl(),
                dev.inbox.testing.TestDatabase.shared().properties());
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'"
                    + " OR (datname = current_database() AND pid <> pg_backend_pid() AND state = 'active')")) {
      List<Long> pids = new ArrayList<>();
      while (rs.next()) {
        pids.add(rs.getLong(1));
      }
      if (pids.isEmpty()) {
        return 0;
      }
      Collections.shuffle(pids);
      try (PreparedStatement kill = c.prepareStatement("SELECT pg_terminate_backend(?::int)")) {
        kill.setInt(1, pids.get(0).intValue());
        kill.executeQuery().close();
      }
      return 1;
    }
  }
}
