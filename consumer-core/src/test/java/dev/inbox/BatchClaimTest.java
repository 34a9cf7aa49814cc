package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BatchClaimTest extends InboxTestSupport {

  @Test
  void a_batch_of_1000_with_20_percent_duplicates_handles_exactly_the_new_keys() throws Exception {
    Inbox inbox = inbox();
    // 200 keys completed earlier, so they are duplicates of committed records.
    List<BatchItem<Long>> earlier = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      earlier.add(BatchItem.of("pay-" + i, 1L));
    }
    inbox.executeBatch(
        "consumer",
        earlier,
        BatchFailurePolicy.CONTINUE,
        (item, tx) -> {
          effect(tx, "consumer", item.key(), item.payload());
          return null;
        });

    // 1000 items: 800 new keys, 100 re-sends of earlier keys, 100 repeats inside the batch itself.
    Random random = new Random(42);
    List<BatchItem<Long>> batch = new ArrayList<>();
    for (int i = 100; i < 900; i++) {
      batch.add(BatchItem.of("pay-" + i, 10L));
    }
    for (int i = 0; i < 100; i++) {
      batch.add(random.nextInt(batch.size()), BatchItem.of("pay-" + i, 10L));
    }
    for (int i = 0; i < 100; i++) {
      int firstAt = random.nextInt(batch.size());
      batch.add(firstAt + 1 + random.nextInt(batch.size() - firstAt), batch.get(firstAt));
    }
    assertThat(batch).hasSize(1000);
    Set<String> distinctNewKeys = new HashSet<>();
    batch.stream()
        .map(BatchItem::key)
        .filter(k -> Integer.parseInt(k.substring(4)) >= 100)
        .forEach(distinctNewKeys::add);

    AtomicInteger handled = new AtomicInteger();
    BatchResult<Long> result =
        inbox.executeBatch(
            "consumer",
            batch,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              handled.incrementAndGet();
              effect(tx, "consumer", item.key(), item.payload());
              return null;
            });

    assertThat(distinctNewKeys).hasSize(800);
    assertThat(handled).as("handler calls").hasValue(800);
    assertThat(result.count(ItemStatus.COMPLETED)).isEqualTo(800);
    assertThat(result.count(ItemStatus.DUPLICATE)).isEqualTo(200);
    assertThat(effects()).as("effect rows: 100 earlier + 800 new").isEqualTo(900);
    assertThat(keysWithADoubledEffect()).as("keys with a doubled effect").isZero();
    assertThat(result.items()).extracting(ItemResult::item).containsExactlyElementsOf(batch);
  }

  @Test
  void a_batch_claim_looks_its_keys_up_by_index_even_on_a_table_of_10000_rows() throws Exception {
    Inbox inbox = inbox();
    sql(
        "INSERT INTO "
            + schema
            + ".inbox (scope, key, state, attempts, created_at, updated_at, completed_at)"
            + " SELECT 'consumer', 'filled-' || g, 'COMPLETED', 1, now(), now(), now()"
            + " FROM generate_series(1, 10000) g");
    sql("ANALYZE " + schema + ".inbox");
    List<BatchItem<Long>> batch = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      batch.add(BatchItem.of(i % 5 == 0 ? "filled-" + (i + 1) : "fresh-" + i, 1L));
    }
    // The handler runs in the batch's transaction after the claim, so it sees the claim's scans.
    List<Long> scans = new ArrayList<>();
    BatchResult<Long> result =
        inbox.executeBatch(
            "consumer",
            batch,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              if (scans.isEmpty()) {
                try (var s = tx.createStatement();
                    var rs =
                        s.executeQuery(
                            "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables"
                                + " WHERE schemaname = '"
                                + schema
                                + "' AND relname = 'inbox'")) {
                  rs.next();
                  scans.add(rs.getLong(1));
                  scans.add(rs.getLong(2));
                }
              }
              return null;
            });
    assertThat(result.count(ItemStatus.COMPLETED)).isEqualTo(80);
    assertThat(result.count(ItemStatus.DUPLICATE)).isEqualTo(20);
    assertThat(scans.get(0)).as("sequential scans of the inbox by the claim").isZero();
    assertThat(scans.get(1)).as("index scans of the inbox by the claim").isPositive();
  }

  @Test
  void a_deadlock_in_a_handler_reruns_the_batch_and_never_counts_as_an_attempt() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(1));
    List<BatchItem<Integer>> batch = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      batch.add(BatchItem.of("d-" + i, i));
    }
    AtomicInteger deadlocks = new AtomicInteger(2);
    BatchResult<Integer> result =
        inbox.executeBatch(
            "consumer",
            batch,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "consumer", item.key(), item.payload());
              if (item.payload() == 4 && deadlocks.getAndDecrement() > 0) {
                // As the JDBC driver reports PostgreSQL's deadlock_detected, wrapped by a handler.
                throw new IllegalStateException(
                    "could not apply", new SQLException("deadlock detected", "40P01"));
              }
              return null;
            });
    // With maxAttempts 1, a counted failure would have given up on d-4 at once.
    assertThat(result.count(ItemStatus.COMPLETED)).isEqualTo(10);
    assertThat(effects()).isEqualTo(10);
    assertThat(inbox.admin().find("consumer", "d-4").orElseThrow().attempts()).isEqualTo(1);

    assertThatThrownBy(
            () ->
                inbox.executeBatch(
                    "consumer",
                    List.of(BatchItem.of("always-deadlocked", 1)),
                    BatchFailurePolicy.CONTINUE,
                    (item, tx) -> {
                      throw new SQLException("deadlock detected", "40P01");
                    }))
        .isInstanceOf(InboxDatabaseException.class);
    assertThat(inbox.admin().find("consumer", "always-deadlocked")).isEmpty();
  }

  @Test
  void one_item_that_throws_leaves_the_others_committed() throws Exception {
    Inbox inbox = inbox(s -> s.maxAttempts(2));
    List<BatchItem<Integer>> batch = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      batch.add(BatchItem.of("m-" + i, i));
    }
    BatchResult<Integer> result =
        inbox.executeBatch(
            "consumer",
            batch,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "consumer", item.key(), item.payload());
              if (item.payload() == 17) {
                throw new IllegalArgumentException("poison");
              }
              return null;
            });
    assertThat(result.count(ItemStatus.COMPLETED)).isEqualTo(49);
    assertThat(result.items().get(17).status()).isEqualTo(ItemStatus.FAILED);
    assertThat(result.items().get(17).failure()).hasMessage("poison");
    assertThat(result.items().get(17).attempts()).isEqualTo(1);
    assertThat(effects()).as("49 effects; the failed item's write rolled back").isEqualTo(49);
    assertThat(effects("m-17")).isZero();

    BatchResult<Integer> again =
        inbox.executeBatch(
            "consumer",
            batch,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "consumer", item.key(), item.payload());
              throw new IllegalArgumentException("poison");
            });
    assertThat(again.count(ItemStatus.DUPLICATE)).isEqualTo(49);
    assertThat(again.items().get(17).status()).isEqualTo(ItemStatus.FAILED);
    assertThat(again.items().get(17).attempts()).isEqualTo(2);
    BatchResult<Integer> third =
        inbox.executeBatch("consumer", batch, BatchFailurePolicy.CONTINUE, (item, tx) -> null);
    assertThat(third.items().get(17).status()).isEqualTo(ItemStatus.GAVE_UP);
    assertThat(effects()).isEqualTo(49);
  }

  @Test
  void the_stop_policy_commits_the_items_before_a_failure_and_leaves_the_rest_untouched()
      throws Exception {
    Inbox inbox = inbox();
    List<BatchItem<Integer>> batch = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      batch.add(BatchItem.of("p0-" + i, i));
    }
    AtomicInteger calls = new AtomicInteger();
    BatchResult<Integer> result =
        inbox.executeBatch(
            "consumer",
            batch,
            BatchFailurePolicy.STOP,
            (item, tx) -> {
              calls.incrementAndGet();
              effect(tx, "consumer", item.key(), item.payload());
              if (item.payload() == 6) {
                throw new IllegalStateException("downstream says no");
              }
              return null;
            });
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(
            ItemStatus.COMPLETED,
            ItemStatus.COMPLETED,
            ItemStatus.COMPLETED,
            ItemStatus.COMPLETED,
            ItemStatus.COMPLETED,
            ItemStatus.COMPLETED,
            ItemStatus.FAILED,
            ItemStatus.NOT_ATTEMPTED,
            ItemStatus.NOT_ATTEMPTED,
            ItemStatus.NOT_ATTEMPTED);
    assertThat(effects()).isEqualTo(6);
    assertThat(inbox.admin().find("consumer", "p0-7"))
        .as("later items were not even claimed")
        .isEmpty();
  }

  @Test
  void a_repeat_with_another_fingerprint_inside_a_batch_is_a_mismatch() throws Exception {
    Inbox inbox = inbox();
    List<BatchItem<String>> batch =
        List.of(
            new BatchItem<>("k", Fingerprints.sha256("a"), "a"),
            new BatchItem<>("k", Fingerprints.sha256("a"), "a"),
            new BatchItem<>("k", Fingerprints.sha256("b"), "b"));
    BatchResult<String> result =
        inbox.executeBatch(
            "s",
            batch,
            BatchFailurePolicy.CONTINUE,
            (item, tx) -> {
              effect(tx, "s", item.key(), 1);
              return null;
            });
    assertThat(result.items())
        .extracting(ItemResult::status)
        .containsExactly(ItemStatus.COMPLETED, ItemStatus.DUPLICATE, ItemStatus.MISMATCH);
    assertThat(effects()).isEqualTo(1);
  }

  @Test
  void an_invalid_key_in_a_batch_rejects_the_whole_batch_before_writing() throws Exception {
    Inbox inbox = inbox();
    List<BatchItem<Integer>> batch = List.of(BatchItem.of("good", 1), BatchItem.of("bad\u0000", 2));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> inbox.executeBatch("s", batch, BatchFailurePolicy.CONTINUE, (item, tx) -> null))
        .isInstanceOf(InvalidKeyException.class)
        .hasMessageContaining("control characters");
    assertThat(inboxRows()).isZero();
  }
}
