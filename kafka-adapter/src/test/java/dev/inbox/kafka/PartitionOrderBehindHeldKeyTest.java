package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.Claim;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.ItemStatus;
import dev.inbox.LeaseToken;
import dev.inbox.Storage;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestStorage;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * "Each partition's records are claimed in one transaction with STOP, so that no record takes
 * effect before an earlier one of its partition" (InboxRecordProcessor) also when a record's key is
 * held elsewhere (a live lease, or a row another transaction has claimed, such as an HTTP retry of
 * the same key on the shared table): it is answered IN_PROGRESS and retried, and the records behind
 * it wait for it instead of committing first (or failing until they give up, when they depend on
 * it). No broker: the processor is called directly.
 */
class PartitionOrderBehindHeldKeyTest {
  private static final String SCOPE = "payments";
  private static final TopicPartition PARTITION = new TopicPartition("payments", 0);

  private HikariDataSource dataSource;
  private Inbox inbox;
  private final List<String> handled = new CopyOnWriteArrayList<>();

  @BeforeEach
  void open() {
    dataSource = TestDataSources.pool(6);
    InboxSettings settings =
        InboxSettings.builder()
            .schema(TestDataSources.newSchema("held_key_order"))
            .storage(Storage.valueOf(TestStorage.name()))
            .janitorInterval(Duration.ZERO)
            .lockTimeout(Duration.ofMillis(300))
            .build();
    inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build();
  }

  @AfterEach
  void close() {
    inbox.close();
    dataSource.close();
  }

  private InboxRecordProcessor<String, String> processor() {
    return InboxRecordProcessor.create(
        inbox,
        SCOPE,
        (record, tx) -> handled.add(key(record)),
        deadLetter -> {
          throw new AssertionError("nothing is dead-lettered here: " + deadLetter);
        });
  }

  private static String key(ConsumerRecord<String, String> record) {
    return new String(
        record.headers().lastHeader(KeyExtractor.DEFAULT_HEADER).value(), StandardCharsets.UTF_8);
  }

  private static ConsumerRecord<String, String> record(long offset, String key) {
    ConsumerRecord<String, String> record =
        new ConsumerRecord<>(PARTITION.topic(), PARTITION.partition(), offset, key, "100");
    record.headers().add(KeyExtractor.DEFAULT_HEADER, key.getBytes(StandardCharsets.UTF_8));
    return record;
  }

  /** pay-A (offset 0) is leased by another worker; pay-B (offset 1) comes after it. */
  @Test
  void a_record_behind_a_leased_key_does_not_take_effect_before_it() throws Exception {
    Claim lease = inbox.leases().claim(SCOPE, "pay-A", null);
    assertThat(lease.isNew()).isTrue();

    PartitionResult result =
        processor().processPartition(PARTITION, List.of(record(0, "pay-A"), record(1, "pay-B")));

    assertThat(result.retryOffset()).as("pay-A is retried").isEqualTo(0);
    assertThat(result.commit()).as("no offset is committed").isNull();
    assertThat(handled).as("handlers run while pay-A (offset 0) is still to be retried").isEmpty();
    assertThat(inbox.admin().find(SCOPE, "pay-B"))
        .as("pay-B's record, committed before pay-A took effect")
        .isEmpty();
  }

  /**
   * pay-A failed once; another transaction (an HTTP retry of the same key, say) has claimed it
   * again and is still running. The partition's claim waits lockTimeout, then claims key by key.
   */
  @Test
  void a_record_behind_a_key_another_transaction_holds_does_not_take_effect_before_it()
      throws Exception {
    assertThat(
            inbox
                .executeBatch(
                    SCOPE,
                    List.of(new BatchItem<>("pay-A", null, "100")),
                    BatchFailurePolicy.CONTINUE,
                    (item, tx) -> {
                      throw new IllegalStateException("gateway timeout");
                    })
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.FAILED);

    try (Connection other = dataSource.getConnection()) {
      other.setAutoCommit(false);
      Claim held = inbox.claim(other, SCOPE, "pay-A", null);
      assertThat(held.isNew()).as("the other transaction holds pay-A").isTrue();

      PartitionResult result =
          processor().processPartition(PARTITION, List.of(record(0, "pay-A"), record(1, "pay-B")));

      assertThat(result.retryOffset()).as("pay-A is retried").isEqualTo(0);
      assertThat(handled)
          .as("handlers run while pay-A (offset 0) is still to be retried")
          .isEmpty();
      other.rollback();
    }
    assertThat(inbox.admin().find(SCOPE, "pay-B"))
        .as("pay-B's record, committed before pay-A took effect")
        .isEmpty();
  }

  /**
   * The consequence for a partition whose records depend on each other (a refund behind its
   * payment): while pay-A is leased elsewhere, pay-B runs before it at every re-read (the loop
   * retries an IN_PROGRESS record after the backoff's first step, 100 ms by default), fails each
   * time because its payment is not there yet, and after maxAttempts (5 by default, so about half a
   * second) gives up. Once pay-A has taken effect, the partition moves on and dead-letters the
   * valid refund, which in partition order would have succeeded.
   */
  @Test
  void a_valid_record_behind_a_leased_key_is_dead_lettered_for_running_before_it()
      throws Exception {
    Claim lease = inbox.leases().claim(SCOPE, "pay-A", null);
    LeaseToken token = lease.lease().orElseThrow();
    AtomicBoolean paymentThere = new AtomicBoolean(false);
    List<String> deadLettered = new CopyOnWriteArrayList<>();
    InboxRecordProcessor<String, String> processor =
        InboxRecordProcessor.create(
            inbox,
            SCOPE,
            (record, tx) -> {
              if (key(record).equals("pay-B") && !paymentThere.get()) {
                throw new IllegalStateException("refund pay-B: payment pay-A not found");
              }
              handled.add(key(record));
            },
            deadLetter ->
                deadLettered.add(
                    deadLetter.disposition().key() + " " + deadLetter.disposition().reason()));
    List<ConsumerRecord<String, String>> poll = List.of(record(0, "pay-A"), record(1, "pay-B"));

    // The loop's re-reads while pay-A's lease runs (it is IN_PROGRESS each time).
    for (int read = 0; read < inbox.settings().maxAttempts(); read++) {
      assertThat(processor.processPartition(PARTITION, poll).retryOffset()).isEqualTo(0);
    }
    // pay-A takes effect where it was leased.
    paymentThere.set(true);
    inbox.leases().complete(token, null);

    PartitionResult result = processor.processPartition(PARTITION, poll);

    assertThat(result.commit()).isNotNull();
    assertThat(deadLettered)
        .as("dead letters once pay-A took effect: pay-B is valid in partition order")
        .isEmpty();
  }
}
