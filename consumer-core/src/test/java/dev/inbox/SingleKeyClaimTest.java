package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A single key is claimed by one statement that inserts it or reads it as its snapshot sees it.
 * These tests pin what that shortcut must not change: a duplicate takes no lock, and the plan that
 * PostgreSQL caches for the statement keeps using the primary key after the table has grown.
 */
class SingleKeyClaimTest extends InboxTestSupport {

  @Test
  void a_generic_plan_cached_on_an_empty_table_still_uses_the_primary_key_at_200k_rows()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection connection = dataSource.getConnection()) {
      // Generic plans from the first server-side prepare, so the plan is made on an empty table.
      execute(connection, "SET plan_cache_mode = force_generic_plan");
      try {
        // pgjdbc prepares a statement on the server from its fifth execution on a connection.
        for (int i = 0; i < 10; i++) {
          connection.setAutoCommit(false);
          Claim warm = inbox.claimAtStart(connection, "s", "warm-" + i, null);
          assertThat(warm.isNew()).isTrue();
          inbox.completeAndCommit(connection, warm, null);
          assertThat(inbox.claim(connection, "s", "warm-caller-" + i, null).isNew()).isTrue();
          assertThat(inbox.claim(connection, "s", "warm-" + i, null).isNew()).isFalse();
          connection.commit();
          Reservation reserved = inbox.reserveAtStart(connection, "s", "warm-reserved-" + i, null);
          assertThat(reserved.isNew()).isTrue();
          inbox.completeAndCommit(connection, reserved, null);
        }
        execute(
            connection,
            "INSERT INTO "
                + schema
                + ".inbox (scope, key, state, attempts, created_at, updated_at, completed_at)"
                + " SELECT 's', 'filled-' || g, 'COMPLETED', 1, now(), now(), now()"
                + " FROM generate_series(1, 200000) g");
        connection.commit();

        Claim fresh = inbox.claimAtStart(connection, "s", "new-key", null);
        assertThat(fresh.isNew()).isTrue();
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();

        Claim duplicate = inbox.claimAtStart(connection, "s", "filled-123456", null);
        assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();

        // A reservation's read, for a new key and for a settled one.
        assertThat(inbox.reserveAtStart(connection, "s", "reserved-key", null).isNew()).isTrue();
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();
        assertThat(inbox.reserveAtStart(connection, "s", "filled-4242", null).outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
        connection.rollback();

        // The claim in a caller's transaction uses the other form of the statement.
        assertThat(inbox.claim(connection, "s", "filled-65432", null).outcome())
            .isEqualTo(ClaimOutcome.DUPLICATE);
        assertThat(inbox.claim(connection, "s", "another-new-key", null).isNew()).isTrue();
        assertThat(sequentialScansOfInboxInThisTransaction(connection)).isZero();
      } finally {
        // The connection goes back to the pool: leave no transaction and no plan setting behind.
        if (!connection.getAutoCommit()) {
          connection.rollback();
          connection.setAutoCommit(true);
        }
        execute(connection, "RESET plan_cache_mode");
      }
    }
  }

  @Test
  void a_duplicate_claim_neither_locks_nor_writes_its_row() throws Exception {
    Inbox inbox = inbox();
    inbox.execute("s", "k", tx -> null);
    String version = "SELECT xmin::text || '/' || xmax::text FROM " + schema + ".inbox";
    String before = queryString(version);
    assertThat(before).endsWith("/0");
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      assertThat(inbox.claimAtStart(tx, "s", "k", null).outcome())
          .isEqualTo(ClaimOutcome.DUPLICATE);
      // Seen from another connection while the duplicate's transaction is still open: a lock
      // would have put its transaction id in xmax, a write would have made a new version.
      assertThat(queryString(version)).isEqualTo(before);
      tx.rollback();

      assertThat(inbox.reserveAtStart(tx, "s", "k", null).outcome())
          .isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(queryString(version)).as("nor does a reservation of it").isEqualTo(before);
      tx.rollback();
    }
  }

  @Test
  void a_claim_that_waited_for_a_first_claimant_who_committed_answers_duplicate() throws Exception {
    Inbox inbox = inbox();
    try (Connection first = dataSource.getConnection();
        Connection second = dataSource.getConnection()) {
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      Claim claim = inbox.claimAtStart(first, "s", "race", null);
      effect(first, "s", "race", 100);
      Future<Claim> waiting = claimWhenBlocked(inbox, second, "race");
      inbox.completeAndCommit(first, claim, null);

      assertThat(waiting.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      second.rollback();
    }
    assertThat(effects("race")).isEqualTo(1);
  }

  @Test
  void a_claim_that_waited_for_a_first_claimant_who_rolled_back_claims_the_key() throws Exception {
    Inbox inbox = inbox();
    try (Connection first = dataSource.getConnection();
        Connection second = dataSource.getConnection()) {
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      assertThat(inbox.claimAtStart(first, "s", "race", null).isNew()).isTrue();
      effect(first, "s", "race", 100);
      Future<Claim> waiting = claimWhenBlocked(inbox, second, "race");
      first.rollback();

      Claim claim = waiting.get(10, TimeUnit.SECONDS);
      assertThat(claim.isNew()).isTrue();
      effect(second, "s", "race", 7);
      inbox.completeAndCommit(second, claim, null);
    }
    assertThat(queryLong("SELECT sum(amount) FROM " + schema + ".effects")).isEqualTo(7);
    assertThat(inbox.admin().find("s", "race").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
  }

  /** Starts a claim on another thread and returns once it waits on a lock. */
  private Future<Claim> claimWhenBlocked(Inbox inbox, Connection connection, String key)
      throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Claim> claim = pool.submit(() -> inbox.claimAtStart(connection, "s", key, null));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (queryLong(
              "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                  + " AND query LIKE '%\""
                  + schema
                  + "\".\"inbox\"%'")
          == 0) {
        assertThat(System.nanoTime()).as("the second claim waits").isLessThan(deadline);
        assertThat(claim.isDone()).as("the second claim cannot finish first").isFalse();
        Thread.sleep(10);
      }
      return claim;
    } finally {
      pool.shutdown();
    }
  }

  private long sequentialScansOfInboxInThisTransaction(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE schemaname = '"
                    + schema
                    + "' AND relname = 'inbox'")) {
      assertThat(rs.next()).as("the inbox table has statistics in this transaction").isTrue();
      return rs.getLong(1);
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
