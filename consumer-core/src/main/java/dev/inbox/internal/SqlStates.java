package dev.inbox.internal;

import java.sql.SQLException;

/**
 * PostgreSQL's SQLStates that change what the inbox does; decided by code, never by message text.
 */
final class SqlStates {
  /** lock_not_available: lock_timeout expired while waiting for a concurrent claimant. */
  static final String LOCK_NOT_AVAILABLE = "55P03";

  /** unique_violation: a plain INSERT met a key that another transaction committed. */
  static final String UNIQUE_VIOLATION = "23505";

  private SqlStates() {}

  static boolean isLockTimeout(SQLException e) {
    return LOCK_NOT_AVAILABLE.equals(e.getSQLState());
  }

  static boolean isUniqueViolation(SQLException e) {
    return UNIQUE_VIOLATION.equals(e.getSQLState());
  }

  /**
   * True when the throwable, or a cause of it, says the connection or the server went away
   * (SQLState class 08, or 57P0x: terminated, shutting down). Such a failure says nothing about the
   * message, so it is never counted as a failed attempt.
   */
  static boolean isConnectionFailure(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException sql && sql.getSQLState() != null) {
        String state = sql.getSQLState();
        if (state.startsWith("08") || state.startsWith("57P")) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * True when the throwable, or a cause of it, is a serialization failure or deadlock: a clash with
   * another transaction that says nothing about the message, so it is never counted as a failed
   * attempt.
   */
  static boolean isRetryableCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException sql && isRetryable(sql)) {
        return true;
      }
    }
    return false;
  }

  /** A serialization failure or deadlock: the whole transaction may simply be run again. */
  static boolean isRetryable(SQLException e) {
    String state = e.getSQLState();
    return "40001".equals(state) || "40P01".equals(state);
  }
}
