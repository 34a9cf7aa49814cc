package dev.inbox.spi;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Tells whether an SQL error aborted a connection's transaction, so that an integration can refuse
 * to report success for work whose commit PostgreSQL would turn into a rollback (a handler that
 * caught an SQL error without rolling back to a savepoint).
 */
public final class AbortedTransactions {
  /** in_failed_sql_transaction: a statement refused by a transaction an earlier error aborted. */
  private static final String IN_FAILED_SQL_TRANSACTION = "25P02";

  private AbortedTransactions() {}

  /**
   * Whether an SQL error aborted the connection's transaction. pgjdbc knows it from the server's
   * last ReadyForQuery, without a round trip; a connection that does not unwrap to pgjdbc is asked
   * with a statement that an aborted transaction refuses.
   */
  public static boolean isAborted(Connection connection) throws SQLException {
    if (connection.isWrapperFor(BaseConnection.class)) {
      return connection.unwrap(BaseConnection.class).getTransactionState()
          == TransactionState.FAILED;
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute("SELECT 1");
      return false;
    } catch (SQLException e) {
      if (IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
        return true;
      }
      throw e;
    }
  }
}
