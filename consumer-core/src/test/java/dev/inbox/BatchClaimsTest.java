package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.spi.BatchClaims;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A batch claimed on the caller's transaction answers each key as {@code Inbox.claim} would, in
 * order, and under contention claims each key once across transactions.
 */
class BatchClaimsTest extends InboxTestSupport {
  private static final byte[] A = {1};
  private static final byte[] B = {2};

  @Test
  void each_key_answers_as_a_claim_of_its_own_would_in_the_batchs_order() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    inbox.execute("orders", "settled", A, tx -> null);
    executeFailing(inbox, "orders", "poison", A);
    List<String> keys = List.of("new-1", "settled", "poison", "new-2", "new-1", "new-2", "settled");
    List<byte[]> fingerprints = Arrays.asList(A, A, A, null, A, B, B);
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      List<Claim> answers = BatchClaims.of(inbox).claimAll(tx, "orders", keys, fingerprints);
      assertThat(answers).extracting(Claim::key).containsExactlyElementsOf(keys);
      assertThat(answers)
          .extracting(Claim::outcome)
          .containsExactly(
              ClaimOutcome.NEW,
              ClaimOutcome.DUPLICATE,
              ClaimOutcome.GAVE_UP,
              ClaimOutcome.NEW,
              ClaimOutcome.DUPLICATE, // its first occurrence, written by this transaction
              ClaimOutcome.DUPLICATE, // a fingerprint against none recorded is no mismatch
              ClaimOutcome.MISMATCH);
      effect(tx, "orders", "new-1", 1);
      effect(tx, "orders", "new-2", 1);
      tx.commit();
    }
    assertThat(inbox.admin().find("orders", "new-1").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(BatchClaims.of(inbox).claimAll(tx, "orders", List.of("new-1", "new-2"), null))
          .extracting(Claim::outcome)
          .containsOnly(ClaimOutcome.DUPLICATE);
      tx.rollback();
    }
    assertThat(effects("new-1") + effects("new-2")).isEqualTo(2);
  }

  @Test
  void a_rollback_takes_the_claims_back() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(BatchClaims.of(inbox).claimAll(tx, "orders", List.of("r-1", "r-2"), null))
          .extracting(Claim::outcome)
          .containsOnly(ClaimOutcome.NEW);
      tx.rollback();
    }
    assertThat(inbox.admin().find("orders", "r-1")).isEmpty();
    assertThat(inbox.admin().find("orders", "r-2")).isEmpty();
  }

  /**
   * One key held by another transaction past the lock timeout: that key answers IN_PROGRESS, the
   * others are claimed, and the caller's transaction is usable with its own lock_timeout.
   */
  @Test
  void a_key_held_elsewhere_answers_in_progress_and_the_rest_are_claimed() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(200)));
    try (HeldKey held = HeldKey.claimed(inbox, "orders", "held");
        Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      try (Statement s = tx.createStatement()) {
        s.execute("SET LOCAL lock_timeout = '7s'");
      }
      List<Claim> answers =
          BatchClaims.of(inbox).claimAll(tx, "orders", List.of("free-1", "held", "free-2"), null);
      assertThat(answers)
          .extracting(Claim::outcome)
          .containsExactly(ClaimOutcome.NEW, ClaimOutcome.IN_PROGRESS, ClaimOutcome.NEW);
      try (Statement s = tx.createStatement();
          ResultSet rs = s.executeQuery("SHOW lock_timeout")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("7s");
      }
      effect(tx, "orders", "free-1", 1);
      tx.commit();
    }
    assertThat(effects("free-1")).isEqualTo(1);
    assertThat(inbox.admin().find("orders", "free-2").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void a_connection_in_auto_commit_mode_and_a_short_fingerprint_list_are_refused()
      throws Exception {
    Inbox inbox = inbox();
    BatchClaims claims = BatchClaims.of(inbox);
    try (Connection c = dataSource.getConnection()) {
      assertThatThrownBy(() -> claims.claimAll(c, "s", List.of("k-1", "k-2"), null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("autoCommit=false");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> claims.claimAll(c, "s", List.of("k-1", "k-2"), List.of(A)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("1 fingerprints for 2 keys");
      c.rollback();
    }
  }

  /**
   * 32 transactions claim batches of the same keys, in shuffled orders, each writing an effect for
   * every key it claims NEW and committing: each key has exactly one effect.
   */
  @Test
  void thirty_two_transactions_claiming_the_same_keys_give_one_effect_per_key() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofSeconds(20)));
    int threads = 32;
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      keys.add("storm-" + i);
    }
    CyclicBarrier start = new CyclicBarrier(threads);
    AtomicInteger newClaims = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        List<String> order = new ArrayList<>(keys);
        java.util.Collections.shuffle(order, new java.util.Random(t));
        runs.add(
            pool.submit(
                () -> {
                  try (Connection tx = dataSource.getConnection()) {
                    tx.setAutoCommit(false);
                    start.await(30, TimeUnit.SECONDS);
                    List<Claim> answers = BatchClaims.of(inbox).claimAll(tx, "storm", order, null);
                    for (Claim claim : answers) {
                      if (claim.isNew()) {
                        newClaims.incrementAndGet();
                        effect(tx, "storm", claim.key(), 1);
                      } else {
                        assertThat(claim.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
                      }
                    }
                    tx.commit();
                  }
                  return null;
                }));
      }
      for (Future<?> run : runs) {
        run.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(newClaims.get()).isEqualTo(keys.size());
    assertThat(effects()).isEqualTo(keys.size());
    assertThat(keysWithADoubledEffect()).isZero();
  }
}
