package dev.inbox;

import java.sql.SQLException;

/**
 * PostgreSQL could not be reached or refused a statement. When it happens during a commit, the
 * outcome is unknown; retrying is safe, because a committed key then answers {@link
 * ClaimOutcome#DUPLICATE}.
 */
public final class InboxDatabaseException extends InboxException {
  private static final long serialVersionUID = 1L;

  public InboxDatabaseException(String scope, String key, String message, SQLException cause) {
    super(
        scope,
        key,
        message
            + where(scope, key)
            + ": "
            + cause.getMessage()
            + " (SQLState "
            + cause.getSQLState()
            + ")",
        cause);
  }

  /** Which key the failure is about, for the message; empty when it is about none. */
  private static String where(String scope, String key) {
    if (key != null) {
      return " (key " + InboxKeys.describe(key) + " in scope " + InboxKeys.describe(scope) + ")";
    }
    return scope == null ? "" : " (scope " + InboxKeys.describe(scope) + ")";
  }

  /** The SQLState of the cause, for example 57P01 when the backend was terminated. */
  public String sqlState() {
    return ((SQLException) getCause()).getSQLState();
  }
}
