package dev.inbox.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Payments where a fraction are re-sends of an earlier key with the same amount, as a producer
 * retrying after a lost acknowledgement would send them.
 */
public final class PaymentStream {
  public record Message(String key, long amount) {}

  private final List<Message> messages = new ArrayList<>();
  private final long distinct;
  private final long expectedSum;

  public PaymentStream(String prefix, int distinctCount, int resendCount, long seed) {
    Random random = new Random(seed);
    long sum = 0;
    for (int i = 0; i < distinctCount; i++) {
      long amount = 1 + random.nextInt(1000);
      messages.add(new Message(prefix + "-" + i, amount));
      sum += amount;
    }
    for (int i = 0; i < resendCount; i++) {
      Message original = messages.get(random.nextInt(distinctCount));
      messages.add(random.nextInt(messages.size()), original);
    }
    this.distinct = distinctCount;
    this.expectedSum = sum;
  }

  /** Every message in sending order, re-sends included. */
  public List<Message> messages() {
    return messages;
  }

  public long distinct() {
    return distinct;
  }

  public long expectedSum() {
    return expectedSum;
  }
}
