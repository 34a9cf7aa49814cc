package dev.inbox.spring;

import dev.inbox.spi.CallerTransactions;
import java.lang.reflect.Field;
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
 * data source, or when the connection bound to this one is JdbcTemplate's inside another manager's
 * transaction (whatever its auto-commit mode), it answers null and the inbox begins a transaction
 * of its own. It never asks {@code DataSourceUtils} for a connection, since outside a transaction
 * that would hand out an auto-commit connection and bind it to the thread.
 *
 * <p>Work to run after a rollback ({@link #runAfterRollback}: the count of a failed attempt) runs
 * in the transaction's {@code afterCompletion}, which Spring's transaction managers call after the
 * rollback and before they hand the connection back to the pool.
 */
public final class SpringCallerTransactions implements CallerTransactions {
  private static final String CONNECTION_SYNCHRONIZATION =
      "org.springframework.jdbc.datasource.DataSourceUtils$ConnectionSynchronization";

  /**
   * The holder field of Spring's private {@code ConnectionSynchronization}, unchanged since Spring
   * 1.x; null if a Spring version lacks it, and then only auto-commit tells JdbcTemplate's apart.
   */
  private static final Field CONNECTION_SYNCHRONIZATION_HOLDER = connectionSynchronizationHolder();

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
    return connection.getAutoCommit() || boundByJdbcTemplate(holder) ? null : connection;
  }

  /**
   * Inside another manager's transaction (Kafka's, a second DataSource's), JdbcTemplate binds a
   * connection of the pool to this data source with a {@code ConnectionSynchronization} that hands
   * it back when that transaction ends: no manager commits it, so it holds no transaction to join.
   * From a pool in auto-commit mode its auto-commit says so; from a pool configured {@code
   * auto-commit=false} only that synchronization does. A holder a transaction manager bound never
   * gets one ({@code DataSourceUtils.doGetConnection}).
   */
  private static boolean boundByJdbcTemplate(ConnectionHolder holder) {
    if (CONNECTION_SYNCHRONIZATION_HOLDER == null
        || !TransactionSynchronizationManager.isSynchronizationActive()) {
      return false;
    }
    for (TransactionSynchronization synchronization :
        TransactionSynchronizationManager.getSynchronizations()) {
      if (synchronization.getClass().getName().equals(CONNECTION_SYNCHRONIZATION)) {
        try {
          if (CONNECTION_SYNCHRONIZATION_HOLDER.get(synchronization) == holder) {
            return true;
          }
        } catch (IllegalAccessException e) {
          return false;
        }
      }
    }
    return false;
  }

  private static Field connectionSynchronizationHolder() {
    try {
      Field field = Class.forName(CONNECTION_SYNCHRONIZATION).getDeclaredField("connectionHolder");
      field.setAccessible(true);
      return field;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  @Override
  public boolean runAfterRollback(Consumer<Connection> work) {
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
            if (status != STATUS_COMMITTED) {
              work.accept(connection);
            }
          }
        });
    return true;
  }
}
