package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.AdminAction;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import dev.inbox.InboxSchema;
import dev.inbox.ItemResult;
import dev.inbox.ItemStatus;
import dev.inbox.SettleResult;
import dev.inbox.Storage;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import dev.inbox.testing.Await;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The key guard and the rotation on real PostgreSQL: exactness across generations. */
class PartitionedStorageTest extends PartitionedTestSupport {

  /**
   * 32 threads, half {@code execute}, half batches of 4, over 4 waves of the same 40 keys each,
   * while 7 forced rotations run spread over the storm: exactly one effect, one NEW answer and one
   * row per key. A "no partition found for row" (23514) or any other failure that is not transient
   * fails the test.
   */
  @Test
  void a_32_thread_storm_of_the_same_keys_across_forced_rotations_has_one_effect_per_key()
      throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofSeconds(10)));
    Generations generations = generations(inbox);
    int threads = 32;
    int waves = 4;
    int keysPerWave = 40;
    int batchSize = 4;
    int plannedRotations = 7;
    long totalWork = (long) threads * waves * keysPerWave;
    AtomicInteger answered = new AtomicInteger();
    AtomicInteger newAnswers = new AtomicInteger();
    AtomicInteger transients = new AtomicInteger();
    AtomicBoolean stormDone = new AtomicBoolean();
    ConcurrentHashMap<String, Integer> newPerKey = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    try {
      Future<Integer> rotations =
          pool.submit(
              () -> {
                int done = 0;
                while (done < plannedRotations && !stormDone.get()) {
                  if (answered.get() < (done + 1) * totalWork / (plannedRotations + 1)) {
                    Thread.sleep(5);
                    continue;
                  }
                  if (generations.rotate(true)) {
                    done++;
                  }
                }
                return done;
              });
      List<Future<?>> storm = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        storm.add(
            pool.submit(
                () -> {
                  Random random = new Random(thread);
                  for (int w = 0; w < waves; w++) {
                    List<String> keys = new ArrayList<>();
                    for (int k = 0; k < keysPerWave; k++) {
                      keys.add("w" + w + "-k" + k);
                    }
                    Collections.shuffle(keys, random);
                    for (int i = 0; i < keys.size(); i += batchSize) {
                      List<String> group = keys.subList(i, i + batchSize);
                      if (thread % 2 == 0) {
                        for (String key : group) {
                          executeUntilAnswered(inbox, key, newPerKey, newAnswers, transients);
                          answered.incrementAndGet();
                        }
                      } else {
                        deliverUntilAnswered(inbox, group, newPerKey, newAnswers, transients);
                        answered.addAndGet(group.size());
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : storm) {
        f.get();
      }
      stormDone.set(true);
      int rotated = rotations.get();
      assertThat(rotated).as("rotations during the storm").isGreaterThanOrEqualTo(1);
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(1, TimeUnit.MINUTES);
    }
    int keys = waves * keysPerWave;
    assertThat(newAnswers.get()).as("NEW answers").isEqualTo(keys);
    assertThat(newPerKey).hasSize(keys).allSatisfy((key, n) -> assertThat(n).isEqualTo(1));
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".effects")).isEqualTo(keys);
    assertThat(
            queryLong(
                "SELECT count(*) FROM (SELECT key FROM "
                    + schema
                    + ".effects GROUP BY key HAVING count(*) > 1) AS doubled"))
        .isZero();
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox")).isEqualTo(keys);
    assertThat(keysStoredTwice()).isZero();
    System.out.printf(
        "storm: %d NEW for %d keys, %d transient failures run again, write generation %d%n",
        newAnswers.get(), keys, transients.get(), writeGeneration());
  }

  private void executeUntilAnswered(
      Inbox inbox,
      String key,
      ConcurrentHashMap<String, Integer> newPerKey,
      AtomicInteger newAnswers,
      AtomicInteger transients) {
    while (true) {
      try {
        Execution run = executeWithEffect(inbox, key);
        if (run.outcome() == ClaimOutcome.NEW) {
          newAnswers.incrementAndGet();
          newPerKey.merge(key, 1, Integer::sum);
          return;
        }
        if (run.outcome() == ClaimOutcome.DUPLICATE) {
          return;
        }
        assertThat(run.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
      } catch (RuntimeException e) {
        if (!TransientFailures.isTransient(e)) {
          throw e;
        }
        transients.incrementAndGet();
      }
    }
  }

  private void deliverUntilAnswered(
      Inbox inbox,
      List<String> keys,
      ConcurrentHashMap<String, Integer> newPerKey,
      AtomicInteger newAnswers,
      AtomicInteger transients) {
    List<String> pending = new ArrayList<>(keys);
    while (!pending.isEmpty()) {
      List<BatchItem<String>> items = pending.stream().map(k -> BatchItem.of(k, k)).toList();
      BatchResult<String> result;
      try {
        result =
            inbox.executeBatch(
                SCOPE,
                items,
                BatchFailurePolicy.CONTINUE,
                (item, tx) -> {
                  effect(tx, item.key());
                  return null;
                });
      } catch (RuntimeException e) {
        if (!TransientFailures.isTransient(e)) {
          throw e;
        }
        transients.incrementAndGet();
        continue;
      }
      for (ItemResult<String> item : result.items()) {
        if (item.status() == ItemStatus.COMPLETED) {
          newAnswers.incrementAndGet();
          newPerKey.merge(item.key(), 1, Integer::sum);
          pending.remove(item.key());
        } else if (item.status() == ItemStatus.DUPLICATE) {
          pending.remove(item.key());
        } else {
          assertThat(item.status()).isEqualTo(ItemStatus.IN_PROGRESS);
        }
      }
    }
  }

  /**
   * Defect 2 of the lost implementation, deterministic: a transaction that locked the table before
   * a rotation, whose insert waits on the key's lock held by an {@code execute} that records the
   * key in the new generation. The guard reads the new partition by name, so the insert fails with
   * 40001 instead of storing the key a second time. The rotation here does not wait for older
   * transactions, to show that the guard alone keeps one row per key.
   */
  @Test
  void an_insert_that_began_before_a_rotation_finds_the_key_in_the_partition_it_attached()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection old = begin()) {
      assertThat(inbox.claim(old, SCOPE, "other", null).isNew()).isTrue();
      assertThat(generations(inbox).rotate(false)).isTrue();
      assertThat(writeGeneration()).isEqualTo(1);
      assertThat(executeWithEffect(inbox, "k").outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(generationOf("k")).isEqualTo(1);
      // The old transaction writes k into the generation its plan knows, as the claim's upsert
      // does for a key its snapshot saw there.
      assertThatThrownBy(
              () -> {
                try (PreparedStatement ps =
                    old.prepareStatement(
                        "INSERT INTO "
                            + schema
                            + ".inbox (scope, key, state, created_at, updated_at, generation)"
                            + " VALUES ('s', 'k', 'IN_PROGRESS', now(), now(), 0)")) {
                  ps.executeUpdate();
                }
              })
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
      old.rollback();
    }
    assertThat(keysStoredTwice()).isZero();
    assertThat(effects("k")).isEqualTo(1);
    assertThat(executeWithEffect(inbox, "k").outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
  }

  /**
   * Defect 1 of the lost implementation, closed by design: a transaction that locked the table
   * before the next generation was attached keeps writing to generations it knows, since the
   * rotation makes the new one the write generation only after that transaction ended. Without the
   * wait, its next claim would be routed to a partition its plan lacks ("no partition of relation
   * found for row").
   */
  @Test
  void a_rotation_switches_the_write_generation_only_after_older_transactions_end()
      throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofMinutes(5)).leaseDuration(Duration.ofMinutes(10)));
    Generations generations = generations(inbox);
    ExecutorService rotation = Executors.newSingleThreadExecutor();
    try (Connection old = begin()) {
      assertThat(inbox.claim(old, SCOPE, "before", null).isNew()).isTrue();
      Future<Boolean> rotated = rotation.submit(() -> generations.rotate(true));
      Await.until(
          "generation 1 attached",
          Duration.ofMinutes(2),
          () -> {
            try (Connection c = dataSource.getConnection()) {
              return generations.state(c, 1) == Generations.PartitionState.ATTACHED;
            }
          });
      assertThat(rotated.isDone()).as("the rotation waits for the older transaction").isFalse();
      assertThat(writeGeneration()).isZero();
      Claim during = inbox.claim(old, SCOPE, "during", null);
      assertThat(during.isNew()).isTrue();
      inbox.complete(old, during, null);
      old.commit();
      assertThat(rotated.get()).isTrue();
    } finally {
      rotation.shutdownNow();
    }
    assertThat(writeGeneration()).isEqualTo(1);
    assertThat(generationOf("during")).isZero();
    assertThat(executeWithEffect(inbox, "after").outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(generationOf("after")).isEqualTo(1);
    assertThat(inbox.admin().lookup(SCOPE, "during", null)).isPresent();
  }

  @Test
  void an_insert_from_a_repeatable_read_transaction_is_refused_by_name() throws Exception {
    inbox();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertThatThrownBy(
              () -> {
                try (PreparedStatement ps =
                    c.prepareStatement(
                        "INSERT INTO "
                            + schema
                            + ".inbox (scope, key, state, created_at, updated_at)"
                            + " VALUES ('s', 'k', 'IN_PROGRESS', now(), now())")) {
                  ps.executeUpdate();
                }
              })
          .isInstanceOfSatisfying(
              SQLException.class,
              e -> {
                assertThat(e.getSQLState()).isEqualTo("25000");
                assertThat(e.getMessage()).contains("READ COMMITTED", "REPEATABLE READ");
              });
      c.rollback();
    }
  }

  /**
   * Defect 3 of the lost implementation: the plain purge deletes by ctid, which on a partitioned
   * table names rows of every partition. A plain inbox started before the conversion refuses to
   * purge, deleting nothing, and a plain inbox is refused on a partitioned table.
   */
  @Test
  void a_table_storage_purge_on_the_partitioned_table_is_refused_and_deletes_nothing()
      throws Exception {
    Inbox plain = inbox(s -> s.storage(Storage.TABLE).retention(Duration.ofSeconds(1)));
    executeWithEffect(plain, "old");
    sql("UPDATE " + schema + ".inbox SET completed_at = completed_at - interval '1 hour'");
    InboxSchema.migrate(dataSource, settings().build());
    assertThat(executeWithEffect(inbox(), "new").outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThatThrownBy(() -> plain.admin().purgeExpired())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("partitioned")
        .hasMessageContaining("storage(PARTITIONED)");
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox")).isEqualTo(2);
    assertThatThrownBy(() -> inbox(s -> s.storage(Storage.TABLE)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("storage(PARTITIONED)");
  }

  /**
   * An operator's settle of a key without a record inserts it through the key guard into the write
   * generation (its upsert names no conflict target there); a claim of it is then a duplicate in
   * any generation, and a key settled in an older generation is settled in place.
   */
  @Test
  void an_operator_settles_a_key_without_a_record_and_its_claim_is_a_duplicate() throws Exception {
    Inbox inbox = inbox();
    AdminAction action = AdminAction.of("ops", "INC-22: reconciled by hand");
    StoredResult result = StoredResult.of(201, "reconciled".getBytes(StandardCharsets.UTF_8));
    assertThat(inbox.admin().settle(SCOPE, "settled", result, action))
        .isEqualTo(SettleResult.SETTLED);
    executeFailing(inbox, "failed");
    assertThat(generations(inbox).rotate(true)).isTrue();
    assertThat(inbox.admin().settle(SCOPE, "failed", result, action))
        .isEqualTo(SettleResult.SETTLED);
    assertThat(generationOf("settled")).isZero();
    assertThat(generationOf("failed")).isZero();
    for (String key : List.of("settled", "failed")) {
      Execution run = executeWithEffect(inbox, key);
      assertThat(run.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(run.storedResult()).contains(result);
      assertThat(effects(key)).isZero();
    }
    assertThat(keysStoredTwice()).isZero();
  }
}
