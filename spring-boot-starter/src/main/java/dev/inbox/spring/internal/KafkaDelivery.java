package dev.inbox.spring.internal;

import dev.inbox.internal.Fingerprints;
import dev.inbox.kafka.KeyExtractor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The records a Spring Kafka container hands to a listener: one for a record listener, a poll's for
 * a batch listener. Keys come from the {@link KeyExtractor} (by default the kafka-adapter's: the
 * {@code idempotency-key} header, else {@code topic-partition@offset}), the scope is the consumer
 * group, and a {@code byte[]} or {@code String} value is fingerprinted (a value the container
 * deserialized into an object is not: its bytes are gone).
 */
final class KafkaDelivery implements Delivery {
  private final String scope;
  private final List<ConsumerRecord<Object, Object>> records;
  private final KeyExtractor<Object, Object> keys;
  private final boolean batch;
  private List<Message> messages;

  KafkaDelivery(
      String scope,
      List<ConsumerRecord<Object, Object>> records,
      KeyExtractor<Object, Object> keys,
      boolean batch) {
    this.scope = scope;
    this.records = records;
    this.keys = keys;
    this.batch = batch;
  }

  @Override
  public String scope() {
    return scope;
  }

  @Override
  public List<Message> messages() {
    if (messages == null) {
      List<Message> found = new ArrayList<>(records.size());
      for (ConsumerRecord<Object, Object> record : records) {
        found.add(message(record));
      }
      messages = found;
    }
    return messages;
  }

  private Message message(ConsumerRecord<Object, Object> record) {
    String key;
    try {
      key = keys.keyOf(record);
    } catch (Exception e) {
      return Message.invalid(String.valueOf(e.getMessage()));
    }
    if (key == null) {
      return Message.invalid("the key extractor found no key");
    }
    return Message.of(key, fingerprint(record.value()));
  }

  static byte[] fingerprint(Object value) {
    if (value == null) {
      // A tombstone: its own fingerprint, as the kafka-adapter gives it, unlike an empty value's.
      return Fingerprints.tagged(Fingerprints.MESSAGE_KIND, new byte[0]);
    }
    if (value instanceof byte[] bytes) {
      return Fingerprints.ofMessage(bytes);
    }
    if (value instanceof String text) {
      return Fingerprints.ofMessage(text.getBytes(StandardCharsets.UTF_8));
    }
    return null;
  }

  @Override
  public boolean batch() {
    return batch;
  }

  @Override
  public RuntimeException failedAt(int index, RuntimeException cause) {
    return new BatchListenerFailedException(cause.getMessage(), cause, records.get(index));
  }

  @Override
  public int failedIndex(Throwable failure, int[] deliveryIndexOfArgument) {
    BatchListenerFailedException named = named(failure);
    if (named == null) {
      return -1;
    }
    ConsumerRecord<?, ?> record = named.getRecord();
    if (record != null) {
      // By topic, partition and offset, as DefaultErrorHandler finds it: the listener may name a
      // copy (a later batch interceptor's, say) of a record of the batch.
      for (int i = 0; i < records.size(); i++) {
        ConsumerRecord<Object, Object> candidate = records.get(i);
        if (candidate.topic().equals(record.topic())
            && candidate.partition() == record.partition()
            && candidate.offset() == record.offset()) {
          return i;
        }
      }
      return -1;
    }
    int argument = named.getIndex();
    return argument >= 0 && argument < deliveryIndexOfArgument.length
        ? deliveryIndexOfArgument[argument]
        : -1;
  }

  /**
   * {@inheritDoc}
   *
   * <p>A listener that names record k of its batch has had its whole transaction rolled back, the
   * records before k included, while {@code DefaultErrorHandler} commits the offsets of the records
   * before the one named as processed. So the container is told of the first record that did not
   * commit instead (the first new record or the first the inbox refused); it commits only the
   * duplicates before it and delivers the rest again. The attempt is counted for record k, so once
   * its key gives up the inbox refuses it, the others commit, and k alone goes to the recoverer.
   */
  @Override
  public Throwable renumbered(
      Throwable failure, int[] deliveryIndexOfArgument, int firstUncommitted) {
    // Spring Kafka's DefaultErrorHandler finds a BatchListenerFailedException anywhere in the
    // cause chain (an aspect's or a future's wrapper around it), so one found there is renumbered
    // too: left as it is, it would name the record by its index in the listener's cut list, and
    // have the records before it committed although they rolled back.
    BatchListenerFailedException named = named(failure);
    if (named == null) {
      return failure;
    }
    int index = failedIndex(named, deliveryIndexOfArgument);
    if (index < 0) {
      return failure;
    }
    boolean wrapped = named != failure;
    Throwable cause = wrapped ? failure : named.getCause();
    if (index <= firstUncommitted) {
      return !wrapped && named.getRecord() != null
          ? failure
          : new BatchListenerFailedException(named.getMessage(), cause, index);
    }
    return new BatchListenerFailedException(
        "the listener failed on record "
            + index
            + " of the batch ("
            + named.getMessage()
            + "), and its transaction rolled back every record from record "
            + firstUncommitted
            + " on, so the batch is delivered again from there",
        cause,
        firstUncommitted);
  }

  private static BatchListenerFailedException named(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof BatchListenerFailedException named) {
        return named;
      }
    }
    return null;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The listener's {@link Acknowledgment} is replaced by one that acknowledges only once the
   * listener's transaction committed (an offset committed before a commit that fails would lose the
   * record: in {@code MANUAL_IMMEDIATE} at once, in {@code MANUAL} with the next commit), names
   * records by their index in the whole batch, not in the listener's cut list, and answers a {@code
   * nack} by rolling the transaction back (the keys it claimed would otherwise commit, and the
   * records delivered again be skipped as duplicates): a batch is delivered again from its first
   * record that did not commit.
   */
  @Override
  public Object[] guardAcknowledgments(
      Object[] arguments, int[] deliveryIndexOfArgument, int firstUncommitted, Runnable nacked) {
    Object[] guarded = null;
    for (int a = 0; a < arguments.length; a++) {
      if (arguments[a] instanceof Acknowledgment acknowledgment
          && !(acknowledgment instanceof AfterCommitAcknowledgment)) {
        if (guarded == null) {
          guarded = arguments.clone();
        }
        guarded[a] =
            new AfterCommitAcknowledgment(
                acknowledgment, deliveryIndexOfArgument, firstUncommitted, nacked);
      }
    }
    return guarded == null ? arguments : guarded;
  }

  private static final class AfterCommitAcknowledgment implements Acknowledgment {
    private final Acknowledgment container;
    private final int[] deliveryIndexOfArgument;
    private final int firstUncommitted;
    private final Runnable nacked;

    AfterCommitAcknowledgment(
        Acknowledgment container,
        int[] deliveryIndexOfArgument,
        int firstUncommitted,
        Runnable nacked) {
      this.container = container;
      this.deliveryIndexOfArgument = deliveryIndexOfArgument;
      this.firstUncommitted = firstUncommitted;
      this.nacked = nacked;
    }

    @Override
    public void acknowledge() {
      afterCommit(container::acknowledge);
    }

    @Override
    public void acknowledge(int index) {
      int inBatch = deliveryIndex(index);
      afterCommit(() -> container.acknowledge(inBatch));
    }

    @Override
    public void nack(Duration sleep) {
      nacked.run();
      container.nack(sleep);
    }

    @Override
    public void nack(int index, Duration sleep) {
      deliveryIndex(index);
      nacked.run();
      container.nack(firstUncommitted, sleep);
    }

    @Override
    public boolean isOutOfOrderCommit() {
      return container.isOutOfOrderCommit();
    }

    private int deliveryIndex(int index) {
      if (index < 0 || index >= deliveryIndexOfArgument.length) {
        throw new IllegalArgumentException(
            "index "
                + index
                + " is not one of the "
                + deliveryIndexOfArgument.length
                + " records the listener was given");
      }
      return deliveryIndexOfArgument[index];
    }

    private static void afterCommit(Runnable acknowledgement) {
      if (!TransactionSynchronizationManager.isSynchronizationActive()) {
        acknowledgement.run();
        return;
      }
      TransactionSynchronizationManager.registerSynchronization(
          new TransactionSynchronization() {
            @Override
            public void afterCommit() {
              acknowledgement.run();
            }
          });
    }
  }

  /**
   * Nothing to do: a batch's {@link Acknowledgment} commits the offsets of the whole batch, the
   * duplicates left out of the listener's list included.
   */
  @Override
  public void acknowledgeDuplicates(int[] indexes) {}

  @Override
  public void acknowledgeSkipped(Object[] listenerArguments) {
    for (Object argument : listenerArguments) {
      if (argument instanceof Acknowledgment acknowledgment) {
        acknowledgment.acknowledge();
      }
    }
  }
}
