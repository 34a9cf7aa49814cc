package dev.inbox.benchmarks;

/**
 * One deduplicating consumer the {@code peers} scenario compares the inbox with. It is built on a
 * freshly reset {@link PaymentsSchema}, creates its own id table there, and receives the payments
 * one at a time, as its framework delivers them; a duplicate must have no effect.
 */
interface Peer extends AutoCloseable {
  void consume(Workload.Payment payment) throws Exception;

  @Override
  default void close() throws Exception {}
}
