package dev.inbox;

import java.sql.SQLException;
import java.util.function.Predicate;

/**
 * Tells the failures that say nothing about a message or request from those that do. A deadlock, a
 * serialization failure, a lock wait past {@code lockTimeout} or a lost connection only means that
 * the transaction must run again; an adapter rolls it back and does not count it as a failed
 * attempt, so that a valid message never reaches {@code GAVE_UP} through them.
 *
 * <p>A {@link NonRetryableException} is never transient, whatever it wraps: the handler that threw
 * it has said that running it again cannot help, so the walk down the causes stops there.
 */
public final class TransientFailures {
  private TransientFailures() {}

  /**
   * True when the throwable, or a cause of it, is an {@link SQLException} whose SQLState is a
   * serialization failure (40001), a deadlock (40P01), a lock wait past the lock timeout (55P03), a
   * connection failure (class 08) or a server going away (57P0x: terminated, shutting down).
   */
  public static boolean isTransient(Throwable t) {
    return isConnectionFailure(t) || isRetryableCause(t) || isLockTimeout(t);
  }

  /**
   * True when the throwable, or a cause of it, is a lock wait that outlasted {@code lock_timeout}
   * (55P03). The inbox's own transactions bound every lock wait by its {@code lockTimeout}, the
   * handler's included, so a handler that queues behind a long transaction on a business row gets
   * this: contention, not a fault of the message. Unlike a deadlock it is not worth running again
   * at once, since the other transaction may still hold the lock.
   */
  public static boolean isLockTimeout(Throwable t) {
    return anyCauseHasState(t, state -> state.equals("55P03"));
  }

  /** True when the throwable, or a cause of it, says the connection or the server went away. */
  public static boolean isConnectionFailure(Throwable t) {
    return anyCauseHasState(t, state -> state.startsWith("08") || state.startsWith("57P"));
  }

  /** True when the throwable, or a cause of it, is a serialization failure or deadlock. */
  public static boolean isRetryableCause(Throwable t) {
    return anyCauseHasState(t, TransientFailures::isRetryableState);
  }

  /** A serialization failure or deadlock: the whole transaction may simply be run again. */
  public static boolean isRetryable(SQLException e) {
    return e.getSQLState() != null && isRetryableState(e.getSQLState());
  }

  private static boolean isRetryableState(String state) {
    return state.equals("40001") || state.equals("40P01");
  }

  /**
   * Walks the cause chain, up to a {@link NonRetryableException}, for an {@link SQLException} whose
   * SQLState passes the test.
   */
  private static boolean anyCauseHasState(Throwable t, Predicate<String> test) {
    for (Throwable c = t; c != null && !(c instanceof NonRetryableException); c = c.getCause()) {
      if (c instanceof SQLException sql
          && sql.getSQLState() != null
          && test.test(sql.getSQLState())) {
        return true;
      }
    }
    return false;
  }
}
