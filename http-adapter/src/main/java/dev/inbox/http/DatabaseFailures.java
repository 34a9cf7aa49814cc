package dev.inbox.http;

import dev.inbox.TransientFailures;
import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * Tells a database that is unavailable (worth a 503 and a retry later) from other failures: a
 * connection refused or lost, a server shutting down or terminating the backend, a server out of
 * connections or resources, or a pool that gave out no connection in time.
 */
final class DatabaseFailures {
  private DatabaseFailures() {}

  static boolean isUnavailable(Throwable t) {
    if (TransientFailures.isConnectionFailure(t)) {
      return true;
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      // HikariCP's "Connection is not available, request timed out" has no SQLState of its own.
      if (c instanceof SQLTransientConnectionException || c instanceof ConnectException) {
        return true;
      }
      // Class 53: insufficient resources, such as too_many_connections (53300).
      if (c instanceof SQLException sql
          && sql.getSQLState() != null
          && sql.getSQLState().startsWith("53")) {
        return true;
      }
    }
    return false;
  }
}
