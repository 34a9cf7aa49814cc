package dev.inbox.kafka;

import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchHandler;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.Disposition;
import dev.inbox.Inbox;
import dev.inbox.InboxKeys;
import dev.inbox.ItemResult;
import dev.inbox.ItemStatus;
import dev.inbox.internal.Fingerprints;
import dev.inbox.internal.HandlerError;
import dev.inbox.kafka.spi.KafkaConsumerListener;
import dev.inbox.spi.Listeners;
import dev.inbox.spi.MessageOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a handler once per new record of a poll ({@link #create}), or once per partition for all of
 * its new records ({@link #createForNewRecords}, for set-based writes), for users who keep their
 * own poll loop (a Spring Kafka batch listener, a hand-written loop). {@link InboxKafkaConsumer}
 * uses it too.
 *
 * <p>Each partition's records are claimed in one transaction with {@link BatchFailurePolicy#STOP},
 * so that no record takes effect before an earlier one of its partition. The returned offsets cover
 * only records that are settled: committed, duplicates, or dead-lettered. Commit them after this
 * method returns, never before: the database then always runs ahead of the offsets, and a
 * redelivery is recognised as a duplicate.
 *
 * <p>A record's value, when it is a {@code byte[]}, is fingerprinted (its SHA-256, tagged as a
 * message's; a null value, a tombstone, has a fingerprint of its own), so that a key re-sent with a
 * different value is dead-lettered as {@link dev.inbox.DeadLetterReason#MISMATCH} instead of
 * committed as a duplicate; for other value types give a fingerprint of the record's raw bytes with
 * {@link #withPayloadBytes}. A handler that throws an {@link Error} (a {@code StackOverflowError},
 * say) fails the attempt like any exception.
 *
 * <pre>{@code
 * ProcessedRecords done = processor.process(consumer.poll(timeout));
 * consumer.commitSync(done.offsetsToCommit());
 * for (PartitionResult retry : done.retries()) consumer.seek(retry.partition(), retry.retryOffset());
 * }</pre>
 */
public final class InboxRecordProcessor<K, V> {
  private static final Logger log = LoggerFactory.getLogger(InboxRecordProcessor.class);

  private final Inbox inbox;
  private final String scope;
  private final KeyExtractor<K, V> keys;

  /** The fingerprint of a record's payload, or null to compare none. */
  private final Function<ConsumerRecord<K, V>, byte[]> fingerprints;

  /** One of these two is set: the handler of each new record, or of all new records at once. */
  private final RecordHandler<K, V> handler;

  private final NewRecordsHandler<K, V> newRecordsHandler;
  private final DeadLetterSink<K, V> deadLetters;
  private final Backoff backoff;
  private final KafkaConsumerListener listener;

  InboxRecordProcessor(
      Inbox inbox,
      String scope,
      KeyExtractor<K, V> keys,
      Function<ConsumerRecord<K, V>, byte[]> fingerprints,
      RecordHandler<K, V> handler,
      NewRecordsHandler<K, V> newRecordsHandler,
      DeadLetterSink<K, V> deadLetters,
      Backoff backoff,
      KafkaConsumerListener listener) {
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.scope = InboxKeys.validateScope(scope);
    this.keys = Objects.requireNonNull(keys, "keys");
    this.fingerprints = fingerprints;
    if ((handler == null) == (newRecordsHandler == null)) {
      throw new IllegalArgumentException(
          "set exactly one of a RecordHandler and a NewRecordsHandler");
    }
    this.handler = handler;
    this.newRecordsHandler = newRecordsHandler;
    this.deadLetters = Objects.requireNonNull(deadLetters, "deadLetters");
    this.backoff = Objects.requireNonNull(backoff, "backoff");
    this.listener = Listeners.nonThrowing(KafkaConsumerListener.class, listener);
  }

  /**
   * A processor with the default key extractor and retry backoff.
   *
   * @param deadLetters receives records that can never take effect; it must return only once they
   *     are durable
   */
  public static <K, V> InboxRecordProcessor<K, V> create(
      Inbox inbox, String scope, RecordHandler<K, V> handler, DeadLetterSink<K, V> deadLetters) {
    return new InboxRecordProcessor<>(
        inbox,
        scope,
        KeyExtractor.headerOrCoordinates(),
        InboxRecordProcessor::bytesFingerprint,
        handler,
        null,
        deadLetters,
        Backoff.DEFAULT,
        KafkaConsumerListener.NOOP);
  }

  /**
   * Like {@link #create}, with a handler called once per partition of a poll for all of its new
   * records, for set-based writes.
   */
  public static <K, V> InboxRecordProcessor<K, V> createForNewRecords(
      Inbox inbox,
      String scope,
      NewRecordsHandler<K, V> handler,
      DeadLetterSink<K, V> deadLetters) {
    return new InboxRecordProcessor<>(
        inbox,
        scope,
        KeyExtractor.headerOrCoordinates(),
        InboxRecordProcessor::bytesFingerprint,
        null,
        Objects.requireNonNull(handler, "handler"),
        deadLetters,
        Backoff.DEFAULT,
        KafkaConsumerListener.NOOP);
  }

  /** The same processor with another key extractor. */
  public InboxRecordProcessor<K, V> withKeyExtractor(KeyExtractor<K, V> extractor) {
    return new InboxRecordProcessor<>(
        inbox,
        scope,
        extractor,
        fingerprints,
        handler,
        newRecordsHandler,
        deadLetters,
        backoff,
        listener);
  }

  /**
   * The same processor fingerprinting, instead of a {@code byte[]} value, the bytes this function
   * returns: the bytes the producer sent, never a re-serialization, which may differ for the same
   * payload (null: no fingerprint is compared). They are fingerprinted as a message's (SHA-256,
   * tagged), so that they are compared with other messages' fingerprints of the key and never with
   * an HTTP request's.
   */
  public InboxRecordProcessor<K, V> withPayloadBytes(
      Function<ConsumerRecord<K, V>, byte[]> payloadBytes) {
    Objects.requireNonNull(payloadBytes, "payloadBytes");
    Function<ConsumerRecord<K, V>, byte[]> fingerprint =
        record -> {
          byte[] bytes = payloadBytes.apply(record);
          return bytes == null ? null : Fingerprints.ofMessage(bytes);
        };
    return new InboxRecordProcessor<>(
        inbox,
        scope,
        keys,
        fingerprint,
        handler,
        newRecordsHandler,
        deadLetters,
        backoff,
        listener);
  }

  /**
   * The same processor without payload fingerprints: a key re-sent with a different value is then
   * committed as a duplicate.
   */
  public InboxRecordProcessor<K, V> withoutPayloadFingerprint() {
    return new InboxRecordProcessor<>(
        inbox, scope, keys, null, handler, newRecordsHandler, deadLetters, backoff, listener);
  }

  /**
   * The same processor reporting each record's outcome to this listener, for metrics, such as
   * {@code new MicrometerKafkaConsumerListener(registry)}. An exception it throws is logged and
   * ignored.
   */
  public InboxRecordProcessor<K, V> withListener(KafkaConsumerListener listener) {
    return new InboxRecordProcessor<>(
        inbox,
        scope,
        keys,
        fingerprints,
        handler,
        newRecordsHandler,
        deadLetters,
        backoff,
        Objects.requireNonNull(listener, "listener must not be null"));
  }

  /**
   * The fingerprint of a null value (a tombstone): of the message kind, so compared with the
   * values' fingerprints, and equal to none of them, an empty value's included.
   */
  private static final byte[] NULL_VALUE_FINGERPRINT =
      Fingerprints.tagged(Fingerprints.MESSAGE_KIND, new byte[0]);

  /**
   * The fingerprint of a {@code byte[]} value (the raw bytes as read) or of a null value; null for
   * a value of any other type.
   */
  static byte[] bytesFingerprint(ConsumerRecord<?, ?> record) {
    if (record.value() == null) {
      return NULL_VALUE_FINGERPRINT.clone();
    }
    return record.value() instanceof byte[] bytes ? Fingerprints.ofMessage(bytes) : null;
  }

  /**
   * Processes every partition of a poll, each in its own transaction. Commit {@link
   * ProcessedRecords#offsetsToCommit()}, and seek each partition of {@link
   * ProcessedRecords#retries()} back to its retry offset before the next poll.
   *
   * @throws dev.inbox.InboxDatabaseException when the database fails. Partitions processed before
   *     the failure are committed in the database, but no offsets are returned, and the consumer's
   *     position has already moved past every record of this poll: before polling again, seek each
   *     of the poll's partitions back to its first record (or to its committed offset), and they
   *     are read again, the committed ones recognised as duplicates. A loop that polls on without
   *     seeking skips records that never took effect. (A Spring Kafka batch listener that throws
   *     gets this from its error handler.)
   * @throws DeadLetterNotPublishedException when a record could not be dead-lettered: as for a
   *     database failure, no offsets are returned, and the poll's partitions must be read again.
   */
  public ProcessedRecords process(ConsumerRecords<K, V> records) throws Exception {
    List<PartitionResult> results = new ArrayList<>();
    for (TopicPartition partition : records.partitions()) {
      results.add(processPartition(partition, records.records(partition)));
    }
    return new ProcessedRecords(results);
  }

  /** Processes one partition's records, given in offset order. */
  public PartitionResult processPartition(
      TopicPartition partition, List<ConsumerRecord<K, V>> records) throws Exception {
    if (records.isEmpty()) {
      return new PartitionResult(partition, null, -1, Duration.ZERO);
    }
    // Keys first: a record without a usable key is dead-lettered in its place in the order.
    Disposition[] rejections = new Disposition[records.size()];
    List<BatchItem<ConsumerRecord<K, V>>> items = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      ConsumerRecord<K, V> record = records.get(i);
      try {
        String key = keys.keyOf(record);
        String broken = key == null ? null : InboxKeys.brokenRule(key);
        if (key == null) {
          rejections[i] = Disposition.invalidKey("the key extractor found no key");
        } else if (broken != null) {
          rejections[i] = Disposition.invalidKey("invalid idempotency key: " + broken);
        } else {
          byte[] fingerprint = fingerprints == null ? null : fingerprints.apply(record);
          items.add(new BatchItem<>(key, fingerprint, record));
        }
      } catch (UndeserializableRecordException e) {
        rejections[i] = Disposition.undeserializable(e.getMessage(), e.getCause());
      } catch (Exception e) {
        rejections[i] = Disposition.invalidKey(e);
      }
    }
    BatchResult<ConsumerRecord<K, V>> batch =
        items.isEmpty() ? new BatchResult<>(List.of()) : execute(items);
    return settle(partition, records, rejections, batch.items());
  }

  private BatchResult<ConsumerRecord<K, V>> execute(List<BatchItem<ConsumerRecord<K, V>>> items) {
    if (newRecordsHandler == null) {
      return inbox.executeBatch(
          scope, items, BatchFailurePolicy.STOP, (item, tx) -> handle(item.payload(), tx));
    }
    return inbox.executeBatch(
        scope,
        items,
        BatchFailurePolicy.STOP,
        BatchHandler.setBased(
            (newItems, tx) -> {
              try {
                newRecordsHandler.handle(payloads(newItems), tx);
              } catch (Error e) {
                throw new HandlerError(e);
              }
            }));
  }

  private static <T> List<T> payloads(List<BatchItem<T>> items) {
    List<T> payloads = new ArrayList<>(items.size());
    for (BatchItem<T> item : items) {
      payloads.add(item.payload());
    }
    return payloads;
  }

  private dev.inbox.StoredResult handle(ConsumerRecord<K, V> record, java.sql.Connection tx)
      throws Exception {
    try {
      handler.handle(record, tx);
    } catch (Error e) {
      throw new HandlerError(e);
    }
    return null;
  }

  /**
   * Walks the records in order, dead-lettering what can never take effect, up to the first record
   * that must be read again.
   */
  private PartitionResult settle(
      TopicPartition partition,
      List<ConsumerRecord<K, V>> records,
      Disposition[] rejections,
      List<ItemResult<ConsumerRecord<K, V>>> results)
      throws Exception {
    int[] counted = new int[4]; // new, duplicate, failed, dead_lettered
    long nextOffset = -1;
    long retryOffset = -1;
    Duration retryAfter = Duration.ZERO;
    int next = 0;
    for (int i = 0; i < records.size(); i++) {
      ConsumerRecord<K, V> record = records.get(i);
      ItemResult<ConsumerRecord<K, V>> result = rejections[i] == null ? results.get(next++) : null;
      Disposition disposition =
          result == null ? rejections[i] : Disposition.of(result, inbox.settings().maxAttempts());
      switch (disposition.action()) {
        case SETTLE -> counted[result.status() == ItemStatus.COMPLETED ? 0 : 1]++;
        case DEAD_LETTER -> {
          deadLetter(new DeadLetter<>(record, disposition));
          counted[3]++;
        }
        case RETRY -> {
          if (result.status() == ItemStatus.FAILED) {
            counted[2]++;
            retryAfter = backoff.after(disposition.attempts());
            log.warn(
                "record {}@{} (key {}) failed attempt {}; retrying in {} ms",
                partition,
                record.offset(),
                disposition.key(),
                disposition.attempts(),
                retryAfter.toMillis(),
                disposition.failure());
          } else if (result.status() == ItemStatus.IN_PROGRESS) {
            retryAfter = backoff.after(1);
          }
          retryOffset = record.offset();
        }
      }
      if (retryOffset >= 0) {
        break;
      }
      nextOffset = record.offset() + 1;
    }
    report(partition.topic(), counted);
    OffsetAndMetadata commit = nextOffset < 0 ? null : new OffsetAndMetadata(nextOffset);
    return new PartitionResult(partition, commit, retryOffset, retryAfter);
  }

  /** The outcome that each slot of {@link #settle}'s counts stands for. */
  private static final MessageOutcome[] COUNTED = {
    MessageOutcome.NEW,
    MessageOutcome.DUPLICATE,
    MessageOutcome.FAILED,
    MessageOutcome.DEAD_LETTERED
  };

  private void report(String topic, int[] counted) {
    for (int i = 0; i < COUNTED.length; i++) {
      if (counted[i] > 0) {
        listener.records(topic, COUNTED[i], counted[i]);
      }
    }
  }

  private void deadLetter(DeadLetter<K, V> deadLetter) throws Exception {
    ConsumerRecord<K, V> record = deadLetter.record();
    log.warn(
        "dead-lettering {}-{}@{} ({}): {}",
        record.topic(),
        record.partition(),
        record.offset(),
        deadLetter.disposition().reason().code(),
        deadLetter.disposition().detail());
    try {
      deadLetters.publish(deadLetter);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DeadLetterNotPublishedException(deadLetter, scope, e);
    } catch (Exception e) {
      throw new DeadLetterNotPublishedException(deadLetter, scope, e);
    }
  }
}
