package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Claim;
import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.internal.Generations.PartitionState;
import dev.inbox.testing.Await;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A hostile review of the chunked carry-over (2718a6b): kept rows across chunk boundaries and
 * across scopes, purgeable rows between them, and claims of the kept keys on callers' transactions
 * while the chunks move them.
 */
class TodayPartitionedReviewTest extends PartitionedTestSupport {
  private static final Duration RETENTION = Duration.ofHours(24);

  /** Kept keys of scope s: a chunk and a half and one more, so two boundaries fall inside it. */
  private static final int KEPT = Generations.CARRY_OVER_CHUNK * 3 + 1;

  /**
   * Generation 0 holds, in key order, scope r's kept rows, then scope s's kept rows with an expired
   * one (completed 30 days ago) after each, then scope u's: the chunks' boundaries fall inside
   * scope s and across scopes. Claims of s's kept keys on callers' transactions run in reverse key
   * order while the retention carries them over: none may answer NEW, every kept row must arrive
   * once, and the expired ones go with the partition as the plain table's purge takes them.
   */
  @Test
  void kept_keys_across_chunk_boundaries_never_answer_new_while_they_move() throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofMinutes(2)));
    Generations generations = generationZeroDue(inbox);

    ExecutorService retention = Executors.newSingleThreadExecutor();
    List<String> answeredNew = new ArrayList<>();
    int sweeps = 0;
    try {
      AtomicBoolean started = new AtomicBoolean();
      Future<Long> retired =
          retention.submit(
              () -> {
                started.set(true);
                return generations.retire();
              });
      while (!started.get() || !retired.isDone()) {
        answeredNew.addAll(claimAllKeptInReverse(inbox));
        sweeps++;
      }
      assertThat(retired.get()).as("expired rows dropped with generation 0").isEqualTo(KEPT);
    } finally {
      retention.shutdownNow();
    }
    answeredNew.addAll(claimAllKeptInReverse(inbox));
    System.out.printf("%d sweeps of %d claims ran during the carry-over%n", sweeps, KEPT);

    assertThat(answeredNew).as("kept keys that a claim answered NEW").isEmpty();
    try (Connection c = dataSource.getConnection()) {
      assertThat(generations.state(c, 0)).isEqualTo(PartitionState.MISSING);
    }
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE generation = 1"))
        .isEqualTo(KEPT + 14);
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE key LIKE '%-expired'"))
        .isZero();
    assertThat(keysStoredTwice()).isZero();
    try (Connection tx = begin()) {
      assertThat(inbox.claim(tx, SCOPE, key("k", 1) + "-expired", null).outcome())
          .as("an expired key, purged with its partition")
          .isEqualTo(ClaimOutcome.NEW);
      tx.rollback();
    }
  }

  /**
   * The same generation, its carry-over held in its third chunk by the key lock of that chunk's
   * first row: the first two chunks are committed in generation 1, the rest is still in generation
   * 0, some of the third chunk's rows maybe moved but not committed. A caller's transaction claims
   * every kept key meanwhile, in reverse key order (waiting, if a row in flux makes it wait, until
   * the chunk commits): every answer is DUPLICATE, and no key ends in both generations. Seen: the
   * sweep answers every key at once, reading the committed rows, without waiting.
   */
  @Test
  void claims_while_a_chunk_is_held_answer_duplicate() throws Exception {
    Inbox inbox =
        inbox(s -> s.lockTimeout(Duration.ofSeconds(60)).leaseDuration(Duration.ofMinutes(2)));
    Generations generations = generationZeroDue(inbox);
    // Chunks in key order: r's 7 and k00001..k00493, k00494..k00993, then k00994 first.
    int thirdChunksFirst = 2 * Generations.CARRY_OVER_CHUNK - 7 + 1;
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (Connection blocker = begin()) {
      lockKey(blocker, key("k", thirdChunksFirst));
      Future<Long> retired = threads.submit(() -> generations.retire());
      awaitBlockedBy("the carry-over waits in its third chunk", pid(blocker), 1);
      assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE generation = 1"))
          .as("the first two chunks, committed")
          .isEqualTo(2L * Generations.CARRY_OVER_CHUNK);
      Future<List<String>> sweep = threads.submit(() -> claimAllKeptInReverse(inbox));
      // The sweep either answers every key at once or waits behind the blocked chunk or its key:
      // then two backends wait for the blocker or for the carry-over that waits for it.
      int blockerPid = pid(blocker);
      String blockedChain =
          "SELECT count(*) FROM pg_stat_activity WHERE pg_blocking_pids(pid) && (SELECT"
              + " array_append(array_agg(pid), "
              + blockerPid
              + ") FROM pg_stat_activity WHERE "
              + blockerPid
              + " = ANY(pg_blocking_pids(pid)))";
      Await.until(
          "the sweep ends or waits",
          Duration.ofMinutes(2),
          () -> sweep.isDone() || queryLong(blockedChain) == 2);
      System.out.printf("the sweep waited for the chunk: %s%n", !sweep.isDone());
      blocker.rollback();
      assertThat(sweep.get()).as("kept keys that a claim answered NEW").isEmpty();
      assertThat(retired.get()).isEqualTo(KEPT);
    } finally {
      threads.shutdownNow();
    }
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE generation = 1"))
        .isEqualTo(KEPT + 14);
    assertThat(keysStoredTwice()).isZero();
  }

  /**
   * Generation 0 due for retirement, holding in key order scope r's 7 kept rows, scope s's {@link
   * #KEPT} kept rows with an expired one (completed 30 days ago) after each, and scope u's 7.
   */
  private Generations generationZeroDue(Inbox inbox) throws SQLException {
    insertCompleted("r", "r", 1, 7, Duration.ofHours(1));
    insertCompleted("s", "k", 1, KEPT, Duration.ofHours(1));
    insertCompleted("s", "k", 1, KEPT, Duration.ofDays(30), "-expired");
    insertCompleted("u", "u", 1, 7, Duration.ofHours(1));
    Generations generations = generations(inbox);
    assertThat(generations.rotate(true)).isTrue();
    generationStartedEarlier(1, RETENTION.plusMinutes(1));
    return generations;
  }

  /**
   * Claims each kept key of scope s on a caller's transaction, rolled back: the keys answered NEW.
   */
  private List<String> claimAllKeptInReverse(Inbox inbox) throws SQLException {
    List<String> answeredNew = new ArrayList<>();
    try (Connection tx = begin()) {
      for (int i = KEPT; i >= 1; i--) {
        Claim claim = inbox.claim(tx, SCOPE, key("k", i), null);
        if (claim.outcome() != ClaimOutcome.DUPLICATE) {
          answeredNew.add(claim.key() + ": " + claim.outcome());
        }
      }
      tx.rollback();
    }
    return answeredNew;
  }

  private static String key(String prefix, int i) {
    return prefix + String.format("%05d", i);
  }

  private void insertCompleted(String scope, String prefix, int from, int to, Duration ago)
      throws SQLException {
    insertCompleted(scope, prefix, from, to, ago, "");
  }

  /** COMPLETED rows in generation 0, written and completed {@code ago}. */
  private void insertCompleted(
      String scope, String prefix, int from, int to, Duration ago, String suffix)
      throws SQLException {
    String when = "now() - interval '" + ago + "'";
    sql(
        "INSERT INTO "
            + schema
            + ".inbox (scope, key, state, attempts, created_at, updated_at, completed_at)"
            + " SELECT '"
            + scope
            + "', '"
            + prefix
            + "' || lpad(i::text, 5, '0') || '"
            + suffix
            + "', 'COMPLETED', 1, "
            + when
            + ", "
            + when
            + ", "
            + when
            + " FROM generate_series("
            + from
            + ", "
            + to
            + ") AS i");
  }
}
