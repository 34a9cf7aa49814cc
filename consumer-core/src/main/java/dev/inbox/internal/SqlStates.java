package dev.inbox.internal;

import java.sql.SQLException;
import org.postgresql.util.PSQLException;

/**
 * PostgreSQL's SQLStates that change what the inbox does; decided by code, never by message text.
 * The transient ones (deadlock, serialization failure, lost connection) are in {@link
 * dev.inbox.TransientFailures}, where the adapters can use them too.
 */
final class SqlStates {
  /** lock_not_available: lock_timeout expired while waiting for a concurrent claimant. */
  static final String LOCK_NOT_AVAILABLE = "55P03";

  /** unique_violation: a plain INSERT met a key that another transaction committed. */
  static final String UNIQUE_VIOLATION = "23505";

  /**
   * serialization_failure: on the partitioned storage also the key guard's answer to a key recorded
   * in another generation, and a write to a row the retention moved meanwhile.
   */
  static final String SERIALIZATION_FAILURE = "40001";

  /** in_failed_sql_transaction: an earlier error aborted the transaction. */
  static final String IN_FAILED_SQL_TRANSACTION = "25P02";

  private SqlStates() {}

  static boolean isLockTimeout(SQLException e) {
    return LOCK_NOT_AVAILABLE.equals(e.getSQLState());
  }

  static boolean isUniqueViolation(SQLException e) {
    return UNIQUE_VIOLATION.equals(e.getSQLState());
  }

  /**
   * The constraint the server named in the error, or null when it named none or the driver is not
   * pgjdbc.
   */
  static String constraint(SQLException e) {
    if (e instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
      return psql.getServerErrorMessage().getConstraint();
    }
    return null;
  }
}
