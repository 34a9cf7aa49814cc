package dev.inbox.spring;

import dev.inbox.spi.CallerTransactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Joins the Spring transaction of the calling thread, when one is active on the inbox's {@link
 * DataSource}: a {@code @Transactional} method under a {@code DataSourceTransactionManager} or a
 * {@code JpaTransactionManager} (both bind the transaction's connection to the data source), so
 * that the inbox's claim and the handler's JdbcTemplate or JPA writes commit together.
 *
 * <p>It joins only a transaction that is actually active and bound to this data source. With no
 * transaction, with {@code PROPAGATION_SUPPORTS}'s empty one, with a transaction manager of another
 * data source, or when the connection bound to this one is in auto-commit mode, it answers null and
 * the inbox begins a transaction of its own. It never asks {@code DataSourceUtils} for a
 * connection, since outside a transaction that would hand out an auto-commit connection and bind it
 * to the thread.
 *
 * <p>Work to run after the transaction ({@link #runAfterTransaction}: the count of a failed
 * attempt) runs in the transaction's {@code afterCompletion}, which Spring's transaction managers
 * call after the commit or rollback and before they hand the connection back to the pool.
 */
public final class SpringCallerTransactions implements CallerTransactions {
  private final DataSource dataSource;

  /** Joins the transactions Spring binds to this data source, the inbox's. */
  public SpringCallerTransactions(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
  }

  @Override
  public Connection current() throws SQLException {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      return null;
    }
    if (!(TransactionSynchronizationManager.getResource(dataSource)
        instanceof ConnectionHolder holder)) {
      return null;
    }
    Connection connection = holder.getConnection();
    // Inside another manager's transaction (Kafka's, say) JdbcTemplate binds an auto-commit
    // connection to the data source: that one holds no transaction to join.
    return connection.getAutoCommit() ? null : connection;
  }

  @Override
  public boolean runAfterTransaction(Consumer<Connection> work) {
    Objects.requireNonNull(work, "work must not be null");
    Connection connection;
    try {
      connection = current();
    } catch (SQLException e) {
      return false;
    }
    if (connection == null || !TransactionSynchronizationManager.isSynchronizationActive()) {
      return false;
    }
    TransactionSynchronizationManager.registerSynchronization(
        new TransactionSynchronization() {
          @Override
          public void afterCompletion(int status) {
            work.accept(connection);
          }
        });
    return true;
  }
}
