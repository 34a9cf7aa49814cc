package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.spi.BatchClaims;
import dev.inbox.spi.InboxListener;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A batch claimed with {@link BatchClaims} answers each key exactly as single claims of the same
 * rows would: outcomes, attempts, tokens, the rows left behind and the metrics, compared side by
 * side in two scopes.
 */
class ClaimAllMatchesSingleClaimsTest extends InboxTestSupport {
  private static final byte[] A = {1};
  private static final byte[] B = {2};

  /** Counts claimed outcomes and lease takeovers per scope. */
  static final class Counting implements InboxListener {
    final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

    @Override
    public void claimed(String scope, ClaimOutcome outcome, int count) {
      counts.computeIfAbsent(scope + ":" + outcome, k -> new AtomicInteger()).addAndGet(count);
    }

    @Override
    public void leasesTakenOver(String scope, int count) {
      counts.computeIfAbsent(scope + ":takenOver", k -> new AtomicInteger()).addAndGet(count);
    }

    Map<String, Integer> of(String scope) {
      Map<String, Integer> out = new java.util.TreeMap<>();
      counts.forEach(
          (k, v) -> {
            if (k.startsWith(scope + ":")) {
              out.put(k.substring(scope.length() + 1), v.get());
            }
          });
      return out;
    }
  }

  private void rows(Inbox inbox, String scope) throws Exception {
    inbox.execute(scope, "done", A, tx -> null);
    inbox.execute(scope, "mis", A, tx -> null);
    executeFailing(inbox, scope, "failed1", A);
    executeFailing(inbox, scope, "failed-mis", A);
    for (int i = 0; i < 3; i++) {
      executeFailing(inbox, scope, "gaveup", A);
    }
    executeFailing(inbox, scope, "failed2", A);
    executeFailing(inbox, scope, "failed2", A);
    assertThat(inbox.leases().claim(scope, "expired", A).outcome()).isEqualTo(ClaimOutcome.NEW);
  }

  private static final List<String> KEYS =
      List.of(
          "new-1",
          "done",
          "mis",
          "failed1",
          "failed-mis",
          "gaveup",
          "failed2",
          "expired",
          "live",
          "failed1",
          "new-1",
          "failed2",
          "new-1");

  private static final List<byte[]> FINGERPRINTS =
      Arrays.asList(A, A, B, A, B, A, null, A, A, B, A, A, B);

  private static String describe(Claim c) {
    return c.key()
        + " "
        + c.outcome()
        + " attempts="
        + c.attempts()
        + " token="
        + c.fencingToken()
        + " result="
        + c.result().isPresent()
        + " lease="
        + c.lease().isPresent()
        + " lockedUntil="
        + (c.lockedUntil() != null);
  }

  private List<String> differential(boolean withHeldKey) throws Exception {
    Counting counting = new Counting();
    Inbox inbox =
        inbox(s -> s.maxAttempts(3).lockTimeout(Duration.ofMillis(300)).listener(counting));
    rows(inbox, "batch");
    rows(inbox, "single");
    timePasses(Duration.ofHours(1)); // the leases on "expired" end
    inbox.leases().claim("batch", "live", A);
    inbox.leases().claim("single", "live", A);
    List<String> keys = new ArrayList<>(KEYS);
    List<byte[]> fingerprints = new ArrayList<>(FINGERPRINTS);
    HeldKey heldBatch = null;
    HeldKey heldSingle = null;
    if (withHeldKey) {
      keys.add(4, "held");
      fingerprints.add(4, A);
      heldBatch = HeldKey.claimed(inbox, "batch", "held");
      heldSingle = HeldKey.claimed(inbox, "single", "held");
    }
    List<String> batch;
    List<String> single = new ArrayList<>();
    counting.counts.clear();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      batch =
          BatchClaims.of(inbox).claimAll(tx, "batch", keys, fingerprints).stream()
              .map(ClaimAllMatchesSingleClaimsTest::describe)
              .toList();
      for (int i = 0; i < keys.size(); i++) {
        single.add(describe(inbox.claim(tx, "single", keys.get(i), fingerprints.get(i))));
      }
      tx.commit();
    } finally {
      if (heldBatch != null) {
        heldBatch.close();
        heldSingle.close();
      }
    }
    assertThat(batch).containsExactlyElementsOf(single);
    assertThat(counting.of("batch")).isEqualTo(counting.of("single"));
    assertThat(inboxRows("batch")).isEqualTo(inboxRows("single"));
    return batch;
  }

  private List<String> inboxRows(String scope) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT key, state, attempts, fencing_token, lease_owner IS NULL, locked_until IS"
                    + " NULL FROM "
                    + schema
                    + ".inbox WHERE scope = '"
                    + scope
                    + "' ORDER BY key")) {
      while (rs.next()) {
        rows.add(
            rs.getString(1)
                + " "
                + rs.getString(2)
                + " "
                + rs.getInt(3)
                + " "
                + rs.getLong(4)
                + " "
                + rs.getBoolean(5)
                + " "
                + rs.getBoolean(6));
      }
    }
    return rows;
  }

  @Test
  void a_batch_answers_every_kind_of_row_as_single_claims_do() throws Exception {
    differential(false);
  }

  @Test
  void a_batch_with_a_held_key_answers_every_kind_of_row_as_single_claims_do() throws Exception {
    differential(true);
  }

  /** Keys an array literal could take for something else, claimed and recorded as they are. */
  @Test
  void keys_that_look_special_in_an_array_literal_are_claimed_as_they_are() throws Exception {
    Inbox inbox = inbox();
    List<String> keys =
        List.of("NULL", "null", " pad ", "a,b", "q\"u", "b\\s", "{c}", "x y", "é", "\uD83D\uDE00");
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      List<Claim> claims = BatchClaims.of(inbox).claimAll(tx, "odd", keys, null);
      assertThat(claims).extracting(Claim::key).containsExactlyElementsOf(keys);
      assertThat(claims).extracting(Claim::outcome).containsOnly(ClaimOutcome.NEW);
      tx.commit();
    }
    for (String key : keys) {
      assertThat(inbox.admin().find("odd", key)).as(key).isPresent();
    }
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(BatchClaims.of(inbox).claimAll(tx, "odd", keys, null))
          .extracting(Claim::outcome)
          .containsOnly(ClaimOutcome.DUPLICATE);
      tx.rollback();
    }
  }

  /** An aborted caller's transaction: the batch fails as a single claim does, nothing left. */
  @Test
  void an_aborted_callers_transaction_fails_the_batch_like_a_single_claim() throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      try (Statement s = tx.createStatement()) {
        assertThatThrownBy(() -> s.execute("SELECT 1/0")).isInstanceOf(SQLException.class);
      }
      Class<?> single;
      try {
        inbox.claim(tx, "ab", "k-1", null);
        throw new AssertionError("claimed on an aborted transaction");
      } catch (RuntimeException e) {
        single = e.getClass();
      }
      assertThatThrownBy(
              () -> BatchClaims.of(inbox).claimAll(tx, "ab", List.of("k-1", "k-2"), null))
          .isInstanceOf(single);
      tx.rollback();
      assertThat(BatchClaims.of(inbox).claimAll(tx, "ab", List.of("k-1", "k-2"), null))
          .extracting(Claim::outcome)
          .containsOnly(ClaimOutcome.NEW);
      tx.commit();
    }
  }

  /** The caller's savepoint of the inbox's name is the caller's still after a fallback. */
  @Test
  void a_callers_savepoint_named_like_the_inboxs_survives_the_fallback() throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(200)));
    try (HeldKey held = HeldKey.claimed(inbox, "sp", "held");
        Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      effect(tx, "sp", "before", 1);
      try (Statement s = tx.createStatement()) {
        s.execute("SAVEPOINT inbox_claim_savepoint");
      }
      effect(tx, "sp", "after", 1);
      assertThat(BatchClaims.of(inbox).claimAll(tx, "sp", List.of("a", "held", "b"), null))
          .extracting(Claim::outcome)
          .containsExactly(ClaimOutcome.NEW, ClaimOutcome.IN_PROGRESS, ClaimOutcome.NEW);
      try (Statement s = tx.createStatement()) {
        s.execute("ROLLBACK TO SAVEPOINT inbox_claim_savepoint");
      }
      tx.commit();
    }
    assertThat(effects("before")).isEqualTo(1);
    assertThat(effects("after")).isZero();
    assertThat(inbox.admin().find("sp", "a")).isEmpty();
    assertThat(inbox.admin().find("sp", "b")).isEmpty();
  }

  /** Fingerprints recorded by a batch are the bytes given, as a single claim records them. */
  @Test
  void fingerprints_of_every_shape_are_recorded_as_single_claims_record_them() throws Exception {
    Inbox inbox = inbox();
    List<byte[]> fingerprints =
        Arrays.asList(
            new byte[0],
            new byte[] {0},
            new byte[] {'\\'},
            new byte[] {'"', ',', '{', '}'},
            "NULL".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
            new byte[] {(byte) 0xff, (byte) 0x80, 0x7f},
            null);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < fingerprints.size(); i++) {
      keys.add("f-" + i);
    }
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      BatchClaims.of(inbox).claimAll(tx, "fb", keys, fingerprints);
      for (int i = 0; i < keys.size(); i++) {
        inbox.claim(tx, "fs", keys.get(i), fingerprints.get(i));
      }
      tx.commit();
    }
    for (String key : keys) {
      byte[] batch = inbox.admin().find("fb", key).orElseThrow().fingerprint();
      byte[] single = inbox.admin().find("fs", key).orElseThrow().fingerprint();
      assertThat(batch).as(key).isEqualTo(single);
    }
  }
}
