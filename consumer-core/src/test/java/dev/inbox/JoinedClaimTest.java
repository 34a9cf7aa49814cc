package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link Inbox#claim(Connection, String, String, byte[])} on the caller's transaction, whose
 * savepoint, lock_timeout and claim go in one round trip: whatever the claim answers, the caller's
 * transaction goes on with its own lock_timeout, its own writes and no savepoint of the inbox's.
 */
class JoinedClaimTest extends InboxTestSupport {
  private static final String SCOPE = "joined";
  private static final String CALLERS_LOCK_TIMEOUT = "4321ms";

  private static byte[] fingerprint(String body) {
    return Fingerprints.ofMessage(body.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void the_callers_lock_timeout_and_writes_survive_a_new_a_duplicate_a_retried_and_a_locked_claim()
      throws Exception {
    Inbox inbox = inbox(s -> s.lockTimeout(Duration.ofMillis(300)));
    executeWithEffect(inbox, SCOPE, "k-done");
    executeFailing(inbox, SCOPE, "k-failed", fingerprint("failed"));
    try (Connection holder = dataSource.getConnection();
        Connection caller = dataSource.getConnection()) {
      holder.setAutoCommit(false);
      assertThat(inbox.claim(holder, SCOPE, "k-held", null).outcome())
          .as("the holder's uncommitted claim")
          .isEqualTo(ClaimOutcome.NEW);
      caller.setAutoCommit(false);
      try (Statement statement = caller.createStatement()) {
        statement.execute("SET LOCAL lock_timeout = '" + CALLERS_LOCK_TIMEOUT + "'");
      }
      effect(caller, "caller", "own-write", 1);

      Claim fresh = inbox.claim(caller, SCOPE, "k-new", fingerprint("new"));
      assertThat(fresh.outcome()).isEqualTo(ClaimOutcome.NEW);
      assertThat(fresh.attempts()).isEqualTo(1);
      assertCallersLockTimeout(caller, "after a NEW claim");

      assertThat(inbox.claim(caller, SCOPE, "k-done", null).outcome())
          .isEqualTo(ClaimOutcome.DUPLICATE);
      assertCallersLockTimeout(caller, "after a DUPLICATE claim");

      inbox.complete(caller, fresh, null);
      assertThat(inbox.claim(caller, SCOPE, "k-new", fingerprint("new")).outcome())
          .as("the key this transaction completed")
          .isEqualTo(ClaimOutcome.DUPLICATE);
      assertCallersLockTimeout(caller, "after a DUPLICATE of this transaction's key");

      Claim retried = inbox.claim(caller, SCOPE, "k-failed", fingerprint("failed"));
      assertThat(retried.outcome()).as("a failed key, claimed again").isEqualTo(ClaimOutcome.NEW);
      assertThat(retried.attempts()).isEqualTo(2);
      assertCallersLockTimeout(caller, "after a retried claim");

      assertThat(inbox.claim(caller, SCOPE, "k-held", null).outcome())
          .as("a key another transaction holds past lockTimeout")
          .isEqualTo(ClaimOutcome.IN_PROGRESS);
      assertCallersLockTimeout(caller, "after a claim that timed out on the lock");

      assertNoSavepointLeftBehind(caller);
      inbox.complete(caller, retried, null);
      caller.commit();
      holder.rollback();
    }
    assertThat(effects("own-write")).as("the caller's write").isEqualTo(1);
    assertThat(effects("k-done")).isEqualTo(1);
    assertThat(
            queryString(
                "SELECT string_agg(key || '=' || state, ',' ORDER BY key) FROM "
                    + schema
                    + ".inbox"))
        .isEqualTo("k-done=COMPLETED,k-failed=COMPLETED,k-new=COMPLETED");
  }

  /**
   * A claim that fails (here: on a transaction the caller's own error aborted) throws, and leaves
   * the transaction as it found it.
   */
  @Test
  void a_claim_on_an_aborted_transaction_throws_and_takes_no_savepoint() throws Exception {
    Inbox inbox = inbox();
    try (Connection caller = dataSource.getConnection()) {
      caller.setAutoCommit(false);
      try (Statement statement = caller.createStatement()) {
        statement.execute("SAVEPOINT callers");
        assertThatThrownBy(() -> statement.execute("SELECT 1/0")).isInstanceOf(SQLException.class);
      }
      assertThatThrownBy(() -> inbox.claim(caller, SCOPE, "k-aborted", null))
          .isInstanceOf(InboxDatabaseException.class)
          .cause()
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25P02"));
      try (Statement statement = caller.createStatement()) {
        statement.execute("ROLLBACK TO SAVEPOINT callers");
      }
      assertThat(inbox.claim(caller, SCOPE, "k-aborted", null).outcome())
          .as("after the caller's own rollback")
          .isEqualTo(ClaimOutcome.NEW);
      assertNoSavepointLeftBehind(caller);
      caller.rollback();
    }
    assertThat(inboxRows()).isZero();
  }

  private static void assertCallersLockTimeout(Connection caller, String when) throws SQLException {
    assertThat(queryString(caller, "SHOW lock_timeout")).as(when).isEqualTo(CALLERS_LOCK_TIMEOUT);
  }

  /** Releasing the inbox's savepoint must fail with 3B001; the caller's own savepoint undoes it. */
  private static void assertNoSavepointLeftBehind(Connection caller) throws SQLException {
    try (Statement statement = caller.createStatement()) {
      statement.execute("SAVEPOINT probe");
      assertThatThrownBy(() -> statement.execute("RELEASE SAVEPOINT inbox_claim_savepoint"))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("3B001"));
      statement.execute("ROLLBACK TO SAVEPOINT probe");
    }
  }
}
