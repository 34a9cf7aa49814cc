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
        message + ": " + cause.getMessage() + " (SQLState " + cause.getSQLState() + ")",
        cause);
  }

  /** The SQLState of the cause, for example 57P01 when the backend was terminated. */
  public String sqlState() {
    return ((SQLException) getCause()).getSQLState();
  }
}
