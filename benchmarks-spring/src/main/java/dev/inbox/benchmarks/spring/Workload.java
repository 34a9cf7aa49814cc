package dev.inbox.benchmarks.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * M payments over 1 000 accounts, where a fraction D are re-sends of an earlier id with the same
 * payload, in a fixed order drawn from a seed. The same draw as the benchmarks module's {@code
 * Workload}, so that a seed gives both harnesses the same messages.
 */
final class Workload {
  static final int ACCOUNTS = 1_000;

  record Payment(String id, int account, long amountCents) {}

  final List<Payment> messages;
  final int distinct;

  /** Each account's balance once every distinct payment took effect exactly once. */
  final long[] expectedBalances = new long[ACCOUNTS];

  Workload(int messageCount, double duplicateRate, long seed) {
    Random random = new Random(seed);
    int resends = (int) Math.round(messageCount * duplicateRate);
    int firsts = messageCount - resends;
    List<Payment> list = new ArrayList<>(messageCount);
    for (int i = 0; i < firsts; i++) {
      Payment payment =
          new Payment("pay-" + i, random.nextInt(ACCOUNTS), 1 + random.nextInt(10_000));
      list.add(payment);
      expectedBalances[payment.account()] += payment.amountCents();
    }
    for (int i = 0; i < resends; i++) {
      // A re-send comes after its original, as a producer's retry would.
      int original = random.nextInt(firsts);
      int position = original + 1 + random.nextInt(list.size() - original);
      list.add(position, list.get(original));
    }
    this.messages = List.copyOf(list);
    this.distinct = firsts;
  }
}
