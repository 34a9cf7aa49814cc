package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.TestDataSources;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A completion commits the claim, the effects and the result together, or nothing: {@code
 * execute}'s, which records a new key in its commit's round trip, and {@code complete} on a
 * caller's transaction. (The statements of the removed {@code claimAtStart} and {@code
 * completeAndCommit} are tested in {@code internal.CompleteAndCommitSqlTest}.)
 */
class CompletionTest extends InboxTestSupport {
  private final StoredResult created =
      StoredResult.of(201, "paid".getBytes(StandardCharsets.UTF_8));

  @Test
  void execute_commits_the_effect_and_the_stored_result_and_leaves_the_connection_usable()
      throws Exception {
    Inbox shared = inbox(); // migrates the schema: Flyway needs two connections
    AtomicInteger firstBackend = new AtomicInteger();
    AtomicInteger nextBackend = new AtomicInteger();
    try (HikariDataSource oneConnection = TestDataSources.pool(1);
        Inbox inbox =
            Inbox.builder().dataSource(oneConnection).settings(settings().build()).build()) {
      Execution run =
          inbox.execute(
              "s",
              "k",
              tx -> {
                firstBackend.set(HeldKey.backendPid(tx));
                effect(tx, "s", "k", 100);
                return created;
              });
      assertThat(run.executed()).isTrue();

      // Seen from other connections: committed, not merely sent.
      assertThat(effects("k")).isEqualTo(1);
      InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
      assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(row.result().body()).contains(created.body().orElseThrow());

      // The same connection begins its next transaction normally, and rolls it back.
      assertThatThrownBy(
              () ->
                  inbox.execute(
                      "s",
                      "k2",
                      tx -> {
                        nextBackend.set(HeldKey.backendPid(tx));
                        effect(tx, "s", "k2", 5);
                        throw serializationFailure();
                      }))
          .isInstanceOf(InboxDatabaseException.class);
      assertThat(nextBackend).as("the same connection").hasValue(firstBackend.get());
    }
    assertThat(effects("k2")).isZero();
    assertThat(shared.admin().find("s", "k2")).isEmpty();
  }

  @Test
  void complete_refuses_a_claim_that_is_not_this_transactions_and_nothing_commits()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      Claim claim = inbox.claim(tx, "s", "k", null);
      assertThat(claim.isNew()).isTrue();
      effect(tx, "s", "k", 100);
      // A claim with another fencing token matches no row: a caller's or the inbox's bug.
      Claim stale = InboxTable.withAnotherFencingToken(claim);
      assertThatThrownBy(() -> inbox.complete(tx, stale, created))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("changed 0 rows");
      tx.rollback();
    }
    assertThat(effects("k")).isZero();
    assertThat(inbox.admin().find("s", "k")).isEmpty();
  }

  @Test
  void a_claim_written_completed_is_completed_by_a_hot_update_that_adds_no_index_entries()
      throws Exception {
    Inbox inbox = inbox();
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      // A batch's first pass writes its claims COMPLETED; the result is added afterwards.
      BatchResult<Long> batch =
          joining(tx)
              .executeBatch(
                  "s",
                  List.of(BatchItem.of("k", 100L)),
                  BatchFailurePolicy.CONTINUE,
                  (item, joined) -> {
                    effect(joined, "s", "k", item.payload());
                    return created;
                  });
      assertThat(batch.items().get(0).status()).isEqualTo(ItemStatus.COMPLETED);
      // This transaction's own counters: one update of the inbox, and it was heap-only.
      InboxTable.Counters counters = InboxTable.counters(tx, schema);
      assertThat(counters.updates()).as("updates").isEqualTo(1);
      assertThat(counters.heapOnlyUpdates()).as("heap-only updates").isEqualTo(1);
      tx.commit();
    }
    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
    assertThat(effects("k")).isEqualTo(1);
  }

  @Test
  void a_stale_claim_never_overwrites_a_row_that_an_earlier_transaction_completed()
      throws Exception {
    Inbox inbox = inbox();
    Claim first;
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      first = inbox.claim(tx, "s", "k", null);
      effect(tx, "s", "k", 100);
      inbox.complete(tx, first, created);
      tx.commit();
    }
    // The same claim again (same fencing token) in a later transaction: the row is COMPLETED, as
    // a row this transaction had written COMPLETED would be, but it is not this transaction's row.
    StoredResult other = StoredResult.of(500, "overwritten".getBytes(StandardCharsets.UTF_8));
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      effect(tx, "s", "k", 100);
      assertThatThrownBy(() -> inbox.complete(tx, first, other))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("changed 0 rows");
      tx.rollback();
    }
    assertThat(effects("k")).isEqualTo(1);
    InboxRecord row = inbox.admin().find("s", "k").orElseThrow();
    assertThat(row.result().status()).isEqualTo(201);
    assertThat(row.result().body()).contains(created.body().orElseThrow());
  }
}
