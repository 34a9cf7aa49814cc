package dev.inbox.testing.acceptance;

import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.PaymentStream;
import java.util.List;

/**
 * One broker and its adapter, as the {@link ConsumerAcceptanceSuite} drives them. A fixture serves
 * one test: it has its own topic or queue, dead-letter destination and consumer group, and an inbox
 * in the test's schema with {@code maxAttempts} of {@link ConsumerAcceptanceSuite#MAX_ATTEMPTS}.
 * Every consumer it starts, in this JVM or in a child, shares them, so that a consumer started
 * after another takes over where it stopped. The suite stops the consumers it starts before it
 * closes the fixture, which closes the inbox and deletes what it made on the broker.
 */
public interface ConsumerFixture extends AutoCloseable {

  /** The topic or queue that the consumers read: the origin of its dead letters. */
  String source();

  /**
   * Publishes the messages in this order and waits for the broker to confirm each: the key where
   * the adapter's default key extractor looks for it first, the amount as decimal text.
   */
  void publish(List<PaymentStream.Message> messages) throws Exception;

  /**
   * Starts a consumer in this JVM whose handler hands its new messages to {@code payments}: each to
   * {@link Payments#apply} or each batch's to {@link Payments#applyAll}, as {@code kind} says.
   * Failed attempts are retried without a long backoff. Closing it stops the consumer, and what it
   * has not settled goes back to the broker; closing it again does nothing.
   */
  AutoCloseable startConsumer(HandlerKind kind, Payments payments) throws Exception;

  /**
   * Starts the same consumer in a child JVM ({@link ChildJvm}) on the test's database, its handler
   * writing to the same effects table through a {@link Payments} of its own.
   */
  ChildJvm startChild(HandlerKind kind) throws Exception;

  /**
   * The published messages that the broker does not count as settled: for Kafka the records past
   * the group's committed offsets, for RabbitMQ the messages ready in the queue. A delivery that a
   * live RabbitMQ consumer holds unacknowledged is not counted until that consumer stops.
   */
  long unsettled() throws Exception;

  /**
   * Waits up to 30 seconds for this many dead letters, then returns every one there is: more than
   * expected means a message was dead-lettered twice.
   */
  List<DeadLetter> deadLetters(int expected) throws Exception;

  /** The handler runs that the inbox counted for the key; 0 when it has no record of it. */
  int attempts(String key);

  /**
   * The messages that the consumers' meters counted with this outcome, such as {@code new} or
   * {@code duplicate}.
   */
  long counted(String outcome);

  /** The adapter's non-retryable exception with this message: {@code NonRetryableException}. */
  RuntimeException nonRetryable(String message);
}
