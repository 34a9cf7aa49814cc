package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A key claimed on another thread, its transaction held open until {@link #close} (or {@link
 * #execution}) lets its handler finish and commit. Two claimants hold a key differently:
 *
 * <ul>
 *   <li>{@link #reserved}: {@code execute} of a key with no record, which holds the key's advisory
 *       lock and writes no row until its commit. Another {@code execute} of the key waits for it; a
 *       claim that does not look at that lock (a batch, a claim on a caller's transaction) does
 *       not.
 *   <li>{@link #claimed}: a consumer's batch, whose claim writes the key's row and keeps it locked
 *       and uncommitted. Every claim that reaches the row waits for it.
 * </ul>
 */
final class HeldKey implements AutoCloseable {
  private final CountDownLatch release = new CountDownLatch(1);
  private final ExecutorService pool = Executors.newSingleThreadExecutor();
  private final Future<Object> holder;
  private final boolean execute;
  private volatile int pid;

  /** Claims the key, running {@code whileHeld} first in the claim's handler. */
  private interface Holding {
    Object claim(HeldHandler whileHeld) throws Exception;
  }

  private interface HeldHandler {
    void run(Connection tx) throws Exception;
  }

  private HeldKey(Holding holding, boolean execute) throws Exception {
    this.execute = execute;
    CountDownLatch held = new CountDownLatch(1);
    holder =
        pool.submit(
            () ->
                holding.claim(
                    tx -> {
                      pid = backendPid(tx);
                      held.countDown();
                      release.await();
                    }));
    while (!held.await(10, TimeUnit.MILLISECONDS)) {
      if (holder.isDone()) {
        holder.get(); // throws what the claimant threw
        throw new AssertionError("the claimant ended without holding the key");
      }
    }
  }

  /** The key held by {@code execute}, whose handler writes nothing. */
  static HeldKey reserved(Inbox inbox, String scope, String key) throws Exception {
    return reserved(inbox, scope, key, null, tx -> null);
  }

  /**
   * The key held by {@code execute}: its advisory lock, and no row. Once released, the handler runs
   * {@code handler} in the same transaction and returns its result.
   */
  static HeldKey reserved(
      Inbox inbox, String scope, String key, byte[] fingerprint, TransactionalHandler handler)
      throws Exception {
    return new HeldKey(
        whileHeld ->
            inbox.execute(
                scope,
                key,
                fingerprint,
                tx -> {
                  whileHeld.run(tx);
                  return handler.handle(tx);
                }),
        true);
  }

  /** The key held by a consumer's batch of one, whose handler writes nothing. */
  static HeldKey claimed(Inbox inbox, String scope, String key) throws Exception {
    return claimed(inbox, scope, key, tx -> null);
  }

  /**
   * The key held by a consumer's batch of one: its row written, locked and uncommitted. Once
   * released, the item's handler runs {@code handler} in the same transaction.
   */
  static HeldKey claimed(Inbox inbox, String scope, String key, TransactionalHandler handler)
      throws Exception {
    return new HeldKey(
        whileHeld ->
            inbox.executeBatch(
                scope,
                List.of(BatchItem.of(key, 0L)),
                BatchFailurePolicy.CONTINUE,
                (item, tx) -> {
                  whileHeld.run(tx);
                  return handler.handle(tx);
                }),
        false);
  }

  /** The backend process of the holder's transaction, for {@code pg_blocking_pids}. */
  int pid() {
    return pid;
  }

  /** Lets a {@linkplain #reserved reserved} key's handler finish, and returns its execution. */
  Execution execution() throws Exception {
    if (!execute) {
      throw new IllegalStateException("the key is held by a batch, not by execute");
    }
    release.countDown();
    try {
      return (Execution) holder.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdown();
    }
  }

  /** Lets the holder finish, and checks that its claim was new and committed. */
  @Override
  public void close() throws Exception {
    if (pool.isShutdown()) {
      return; // answered through execution()
    }
    release.countDown();
    try {
      Object outcome = holder.get(10, TimeUnit.SECONDS);
      boolean ran =
          outcome instanceof Execution run
              ? run.executed()
              : ((BatchResult<?>) outcome).items().get(0).status() == ItemStatus.COMPLETED;
      assertThat(ran).as("the holder's claim was new and committed").isTrue();
    } finally {
      pool.shutdown();
    }
  }

  static int backendPid(Connection connection) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
