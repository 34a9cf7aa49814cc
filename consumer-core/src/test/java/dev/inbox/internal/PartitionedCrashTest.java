package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import dev.inbox.TransientFailures;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.TestDatabase;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** kill -9 of a process in the middle of rotations and retirements. */
class PartitionedCrashTest extends PartitionedTestSupport {

  /**
   * A child JVM rotates and retires without pause while 4 threads claim 200 keys; it is killed with
   * kill -9 three times at random points. Then one retention pass and one rotation here: no
   * partition left pending detach or detached and not dropped, every generation has its partition,
   * no key stored twice, exactly one effect per key, and every key answers DUPLICATE.
   */
  @Test
  void kill_9_during_rotation_and_retention_leaves_no_duplicate_and_no_stuck_partition()
      throws Exception {
    Inbox inbox = inbox();
    TestDatabase db = TestDatabase.shared();
    List<String> args = List.of(db.jdbcUrl(), db.user() == null ? "" : db.user(), schema);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      keys.add("k" + i);
    }
    ConcurrentHashMap<String, Integer> newPerKey = new ConcurrentHashMap<>();
    ExecutorService claimers = Executors.newFixedThreadPool(4);
    Random random = new Random(22);
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        List<String> order = new ArrayList<>(keys);
        Collections.shuffle(order, new Random(t));
        work.add(
            claimers.submit(
                () -> {
                  for (String key : order) {
                    while (true) {
                      try {
                        Execution run = executeWithEffect(inbox, key);
                        if (run.outcome() == ClaimOutcome.NEW) {
                          newPerKey.merge(key, 1, Integer::sum);
                        }
                        if (run.outcome() != ClaimOutcome.IN_PROGRESS) {
                          break;
                        }
                      } catch (RuntimeException e) {
                        if (!TransientFailures.isTransient(e)) {
                          throw e;
                        }
                      }
                    }
                  }
                  return null;
                }));
      }
      for (int kill = 0; kill < 3; kill++) {
        try (ChildJvm child = ChildJvm.start(PartitionedRotationProcess.class, args)) {
          while (!child.output().contains("pass done") && child.isAlive()) {
            Thread.sleep(50);
          }
          Thread.sleep(random.nextInt(1500));
          assertThat(child.isAlive())
              .as("the child rotates until killed: " + child.output())
              .isTrue();
          child.kill9();
        }
      }
      for (Future<?> f : work) {
        f.get();
      }
    } finally {
      claimers.shutdownNow();
      claimers.awaitTermination(1, TimeUnit.MINUTES);
    }
    // Whatever the kills left, one pass here finishes it, and the next rotation works.
    sql("UPDATE " + schema + ".inbox_generations SET started_at = now() - interval '25 hours'");
    Generations generations = generations(inbox);
    generations.retire();
    assertThat(generations.rotate(true)).isTrue();

    assertThat(
            queryLong(
                "SELECT count(*) FROM pg_inherits WHERE inhparent = '"
                    + schema
                    + ".inbox'::regclass AND inhdetachpending"))
        .as("partitions pending detach")
        .isZero();
    assertThat(
            queryLong(
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE n.nspname = '"
                    + schema
                    + "' AND c.relname ~ '^inbox_g[0-9]+$' AND NOT c.relispartition"))
        .as("partitions detached and left behind")
        .isZero();
    assertThat(
            queryLong(
                "SELECT count(*) FROM "
                    + schema
                    + ".inbox_generations g WHERE to_regclass('"
                    + schema
                    + ".inbox_g' || g.generation) IS NULL"))
        .as("generations without a partition")
        .isZero();
    assertThat(attachedPartitions())
        .isEqualTo(queryLong("SELECT count(*) FROM " + schema + ".inbox_generations"));
    assertThat(keysStoredTwice()).isZero();
    assertThat(newPerKey).hasSize(keys.size()).allSatisfy((k, n) -> assertThat(n).isEqualTo(1));
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".effects")).isEqualTo(keys.size());
    for (String key : keys) {
      assertThat(executeWithEffect(inbox, key).outcome()).as(key).isEqualTo(ClaimOutcome.DUPLICATE);
    }
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".effects")).isEqualTo(keys.size());
    System.out.printf("crash: write generation %d after 3 kills%n", writeGeneration());
  }
}
