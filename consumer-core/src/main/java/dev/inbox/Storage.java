package dev.inbox;

/**
 * How the inbox table stores its records; {@link InboxSettings.Builder#storage}. Both keep the same
 * records, state machine and answers; they differ in how expired records go away. The design and
 * its proof of exactness are in {@code docs/scale.md}.
 */
public enum Storage {
  /**
   * One plain table; {@link InboxAdmin#purgeExpired()} deletes expired records in bounded batches.
   * The default.
   */
  TABLE,

  /**
   * A table partitioned into generations: the janitor starts a new generation every quarter of the
   * retention and drops a generation whole once its successor is older than the retention, after
   * carrying over the few rows the plain table would keep (failed keys, live leases, keys completed
   * within the retention). No DELETE of single rows. Needs READ COMMITTED callers, holds one
   * advisory lock per inserted key until the transaction's end, and has its own migrations, which
   * turn a live plain table into its first generation.
   */
  PARTITIONED
}
