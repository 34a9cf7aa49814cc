package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.InboxSchema;
import dev.inbox.RecordState;
import dev.inbox.Storage;
import dev.inbox.TransientFailures;
import dev.inbox.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The partitioned migration of a live plain table (docs/scale.md). */
class PartitionedMigrationTest extends PartitionedTestSupport {

  /**
   * A plain table with 50 completed keys and a failed one is converted while a thread keeps running
   * {@code execute} on a plain-mode inbox through the conversion. On the partitioned inbox every
   * key that ran before, during or after it is a DUPLICATE with exactly one effect, the failed key
   * keeps its attempt, and new keys go to generation 1.
   */
  @Test
  void a_live_plain_table_becomes_generation_0_and_every_key_stays_a_duplicate() throws Exception {
    Inbox plain = inbox(s -> s.storage(Storage.TABLE));
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      keys.add("before-" + i);
      assertThat(executeWithEffect(plain, "before-" + i).outcome()).isEqualTo(ClaimOutcome.NEW);
    }
    executeFailing(plain, "failed");

    List<String> ran = new CopyOnWriteArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService runner = Executors.newSingleThreadExecutor();
    try {
      Future<Integer> transients =
          runner.submit(
              () -> {
                int failures = 0;
                for (int i = 0; !stop.get(); ) {
                  String key = "during-" + i;
                  try {
                    Execution run = executeWithEffect(plain, key);
                    assertThat(run.outcome()).isIn(ClaimOutcome.NEW, ClaimOutcome.DUPLICATE);
                    ran.add(key);
                    i++;
                  } catch (RuntimeException e) {
                    if (!TransientFailures.isTransient(e)) {
                      throw e;
                    }
                    failures++;
                  }
                }
                return failures;
              });
      Await.until("keys run before the conversion", Duration.ofMinutes(2), () -> ran.size() >= 5);
      InboxSchema.migrate(dataSource, settings().build());
      int converted = ran.size();
      Await.until(
          "keys run after the conversion",
          Duration.ofMinutes(2),
          () -> ran.size() >= converted + 5);
      stop.set(true);
      System.out.printf(
          "conversion: %d keys run through it, %d transient failures run again%n",
          ran.size(), transients.get());
    } finally {
      runner.shutdown();
    }
    keys.addAll(ran);

    Inbox partitioned = inbox();
    for (String key : keys) {
      assertThat(executeWithEffect(partitioned, key).outcome())
          .as(key)
          .isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(effects(key)).as(key).isEqualTo(1);
    }
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".effects")).isEqualTo(keys.size());
    InboxRecord failed = partitioned.admin().find(SCOPE, "failed").orElseThrow();
    assertThat(failed.state()).isEqualTo(RecordState.FAILED);
    assertThat(failed.attempts()).isEqualTo(1);
    assertThat(executeWithEffect(partitioned, "failed").outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(partitioned.admin().find(SCOPE, "failed").orElseThrow().attempts()).isEqualTo(2);
    assertThat(generationOf("before-0")).isZero();
    assertThat(executeWithEffect(partitioned, "after").outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(generationOf("after")).isEqualTo(1);
    assertThat(keysStoredTwice()).isZero();
  }
}
