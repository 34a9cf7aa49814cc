package dev.inbox.testing.acceptance;

import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.PaymentStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The handler's work in every scenario: one row in the {@link EffectsTable} per payment, in the
 * transaction the adapter passes, except for two amounts that fail on purpose. A payment of {@link
 * #POISON} fails every attempt with an {@link IllegalStateException}; one of {@link #REJECTED}
 * throws the adapter's non-retryable exception, which the fixture makes ({@link
 * ConsumerFixture#nonRetryable}). A consumer in this JVM or in a child hands each new message to
 * {@link #apply}, or each batch's new messages to {@link #applyAll}.
 *
 * <p>It counts the calls, so that a scenario can check that a set-based handler got whole batches.
 * Safe to share between threads.
 */
public final class Payments {
  /** The amount of a payment that fails every attempt, retryably. */
  public static final long POISON = -1;

  /** The amount of a payment that the handler rejects with the non-retryable exception. */
  public static final long REJECTED = -2;

  static final String POISON_MESSAGE = "cannot apply a negative payment";
  static final String REJECTED_MESSAGE = "the account is closed";

  private final EffectsTable effects;
  private final Function<String, ? extends RuntimeException> nonRetryable;
  private final AtomicInteger calls = new AtomicInteger();
  private final AtomicInteger largestCall = new AtomicInteger();
  private final AtomicInteger largestFailingCall = new AtomicInteger();

  /**
   * @param nonRetryable makes the adapter's non-retryable exception with a message, such as {@code
   *     NonRetryableException::new}
   */
  public Payments(EffectsTable effects, Function<String, ? extends RuntimeException> nonRetryable) {
    this.effects = effects;
    this.nonRetryable = nonRetryable;
  }

  /** A per-item handler's work: one effect, or the failure its amount asks for. */
  public void apply(Connection transaction, String key, long amount) throws SQLException {
    called(1);
    failIfAsked(amount, 1);
    effects.apply(transaction, key, amount);
  }

  /**
   * A set-based handler's work: one effect per payment in one statement. One failing payment fails
   * the whole call, as one bad row fails a set-based statement.
   */
  public void applyAll(Connection transaction, List<PaymentStream.Message> payments)
      throws SQLException {
    called(payments.size());
    for (PaymentStream.Message payment : payments) {
      failIfAsked(payment.amount(), payments.size());
    }
    effects.applyAll(
        transaction,
        payments.stream().map(PaymentStream.Message::key).toList(),
        payments.stream().map(PaymentStream.Message::amount).toList());
  }

  /** The handler's calls, a per-item handler's included. */
  public int calls() {
    return calls.get();
  }

  /** The most payments handed over in one call. */
  public int largestCall() {
    return largestCall.get();
  }

  /** The most payments handed over in one call that had a failing payment among them. */
  public int largestFailingCall() {
    return largestFailingCall.get();
  }

  private void called(int size) {
    calls.incrementAndGet();
    largestCall.accumulateAndGet(size, Math::max);
  }

  private void failIfAsked(long amount, int callSize) {
    if (amount == POISON || amount == REJECTED) {
      largestFailingCall.accumulateAndGet(callSize, Math::max);
    }
    if (amount == POISON) {
      throw new IllegalStateException(POISON_MESSAGE);
    }
    if (amount == REJECTED) {
      throw nonRetryable.apply(REJECTED_MESSAGE);
    }
  }
}
