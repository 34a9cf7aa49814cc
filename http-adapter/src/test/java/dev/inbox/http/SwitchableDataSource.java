package dev.inbox.http;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The real pool until a test points it at another data source, as a database that goes away after
 * the inbox has started. Counts the connections asked of it, so that a test can wait until the
 * filter has tried the database again.
 */
final class SwitchableDataSource implements DataSource {
  final AtomicInteger connectionsAsked = new AtomicInteger();
  volatile DataSource target;

  SwitchableDataSource(DataSource target) {
    this.target = target;
  }

  /** A data source whose every connection is refused: nothing listens on the port. */
  static PGSimpleDataSource refusing(int closedPort, String password) {
    PGSimpleDataSource refusing = new PGSimpleDataSource();
    refusing.setServerNames(new String[] {"127.0.0.1"});
    refusing.setPortNumbers(new int[] {closedPort});
    refusing.setDatabaseName("payments");
    refusing.setUser("postgres");
    refusing.setPassword(password);
    return refusing;
  }

  @Override
  public Connection getConnection() throws SQLException {
    connectionsAsked.incrementAndGet();
    return target.getConnection();
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    connectionsAsked.incrementAndGet();
    return target.getConnection(user, password);
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {}

  @Override
  public void setLoginTimeout(int seconds) {}

  @Override
  public int getLoginTimeout() {
    return 0;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return false;
  }
}
