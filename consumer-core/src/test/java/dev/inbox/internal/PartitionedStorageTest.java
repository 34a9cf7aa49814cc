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
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
import org.postgresql.PGStatement;

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

  /**
   * The 23514 of the storm, deterministic. A backend that builds its list of the table's partitions
   * (PostgreSQL's partition descriptor, kept in its relation cache across transactions) from a
   * catalog snapshot taken before the attach of generation 1 commits, and reads the attach's
   * invalidation before it stores that list, keeps the list without generation 1 after its
   * transaction ended: the invalidation is spent. The rotation's wait for older transactions does
   * not help, since that transaction ended before the switch. Without a second invalidation after
   * the wait, this backend's next claim of a new key is routed to generation 1 and fails with "no
   * partition of relation found for row".
   */
  @Test
  void a_partition_list_built_across_the_attach_is_refreshed_before_the_switch() throws Exception {
    Inbox inbox = inbox();
    Generations generations = generations(inbox);
    try (Connection stale = dataSource.getConnection()) {
      attachWhileItsListIsBuilt(stale, generations);
      assertThat(generations.rotate(true)).isTrue();
      assertThat(writeGeneration()).isEqualTo(1);
      stale.setAutoCommit(false);
      Claim after = inbox.claim(stale, SCOPE, "after", null);
      assertThat(after.isNew()).isTrue();
      inbox.complete(stale, after, null);
      stale.commit();
    }
    assertThat(generationOf("after")).isEqualTo(1);
  }

  /**
   * The second wait: a transaction of the backend with the stale list that locked the table after
   * the rotation listed the transactions of its first wait, and before the refresh, may go on
   * routing by the stale list (a backend reads invalidations inside a transaction only when it
   * takes a lock it does not hold yet, or when told to catch up), so the rotation switches only
   * once it has ended; its claims meanwhile go to generation 0. Without the second wait the switch
   * happens while it is open (seen: this test fails on that).
   */
  @Test
  void a_transaction_with_a_stale_partition_list_is_waited_for_after_the_refresh()
      throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofMinutes(5)).leaseDuration(Duration.ofMinutes(10)));
    Generations generations = generations(inbox);
    ExecutorService rotation = Executors.newSingleThreadExecutor();
    try (Connection stale = dataSource.getConnection();
        Connection old = begin()) {
      attachWhileItsListIsBuilt(stale, generations);
      assertThat(inbox.claim(old, SCOPE, "before", null).isNew()).isTrue();
      String unrefreshed = generationColumnVersion();
      Future<Boolean> rotated = rotation.submit(() -> generations.rotate(true));
      awaitRotationWaiting(rotated, "the first wait, for old", unrefreshed, false);
      stale.setAutoCommit(false);
      Claim a = inbox.claim(stale, SCOPE, "a", null);
      assertThat(a.isNew()).isTrue();
      old.commit();
      awaitRotationWaiting(
          rotated, "the second wait, for the stale transaction", unrefreshed, true);
      Claim b = inbox.claim(stale, SCOPE, "b", null);
      assertThat(b.isNew()).isTrue();
      assertThat(rotated.isDone()).as("the switch waits for the stale transaction").isFalse();
      inbox.complete(stale, a, null);
      inbox.complete(stale, b, null);
      stale.commit();
      assertThat(rotated.get()).isTrue();
      Claim c = inbox.claim(stale, SCOPE, "c", null);
      assertThat(c.isNew()).isTrue();
      inbox.complete(stale, c, null);
      stale.commit();
    } finally {
      rotation.shutdownNow();
    }
    assertThat(generationOf("a")).isZero();
    assertThat(generationOf("b")).isZero();
    assertThat(generationOf("c")).isEqualTo(1);
  }

  /**
   * Step 1 of a rotation (attaching generation 1), committed while {@code stale}'s backend builds
   * its list of the partitions: after the catalog read of the list, before the backend reads the
   * attach's invalidation. The build is held there by a lock on pg_class, which its cache miss on a
   * partition's pg_class row waits for; the backend keeps the list without generation 1.
   */
  private void attachWhileItsListIsBuilt(Connection stale, Generations generations)
      throws Exception {
    String parent = schema + ".inbox";
    String readThroughParent =
        "SELECT count(*) FROM " + parent + " WHERE scope = 's' AND key = 'absent'";
    ExecutorService reader = Executors.newSingleThreadExecutor();
    try (Connection attach = dataSource.getConnection();
        Connection catalogLock = dataSource.getConnection();
        Connection observer = dataSource.getConnection();
        PreparedStatement waitEvent =
            observer.prepareStatement(
                "SELECT coalesce(wait_event_type, '') FROM pg_stat_get_activity(?)")) {
      // Server-side from its first run: while pg_class is locked, parsing a query could wait.
      waitEvent.unwrap(PGStatement.class).setPrepareThreshold(1);
      waitEvent.setInt(1, pid(stale));
      waitEvent.executeQuery().close();
      // The backend's caches warm, then its partitions' pg_class rows invalidated (ANALYZE
      // rewrites their statistics), then the parent's relation entry rebuilt without its list.
      execute(stale, readThroughParent);
      execute(stale, readThroughParent);
      sql("ANALYZE " + parent);
      execute(stale, "SELECT pg_relation_size('" + parent + "')");

      attach.setAutoCommit(false);
      execute(
          attach,
          "CREATE TABLE IF NOT EXISTS "
              + generations.partition(1)
              + " (LIKE "
              + parent
              + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)");
      execute(
          attach,
          "ALTER TABLE "
              + parent
              + " ATTACH PARTITION "
              + generations.partition(1)
              + " FOR VALUES IN (1)");
      catalogLock.setAutoCommit(false);
      execute(catalogLock, "LOCK TABLE pg_catalog.pg_class IN ACCESS EXCLUSIVE MODE");
      try {
        Future<?> read = reader.submit(() -> execute(stale, readThroughParent));
        Await.until(
            "the reader's list of partitions waits for pg_class",
            Duration.ofMinutes(1),
            () -> {
              try (ResultSet rs = waitEvent.executeQuery()) {
                return rs.next() && rs.getString(1).equals("Lock");
              }
            });
        attach.commit();
        catalogLock.rollback();
        read.get(1, TimeUnit.MINUTES);
      } finally {
        attach.rollback();
        catalogLock.rollback();
      }
    } finally {
      reader.shutdownNow();
    }
    assertThat(generations.state(stale, 1)).isEqualTo(Generations.PartitionState.ATTACHED);
    assertThat(writeGeneration()).isZero();
  }

  private static Void execute(Connection connection, String statement) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute(statement);
    }
    return null;
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
