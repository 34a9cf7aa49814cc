package dev.inbox.examples;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import java.sql.SQLException;

/** The payments database and inbox of a consumer or server process. */
final class ConsumerDatabase implements AutoCloseable {
  static final String LOCAL_URL = "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres";

  private static final int MIGRATION_ATTEMPTS = 10;

  final HikariDataSource dataSource;
  final Inbox inbox;

  ConsumerDatabase(String jdbcUrl, int poolSize) {
    this(jdbcUrl, poolSize, InboxSettings.defaults());
  }

  ConsumerDatabase(String jdbcUrl, int poolSize, InboxSettings settings) {
    dataSource = pool(jdbcUrl, poolSize);
    try {
      migrate(settings);
    } catch (RuntimeException e) {
      dataSource.close();
      throw CommandErrors.database("cannot create the payments tables in", jdbcUrl, e);
    }
    inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(false).build();
  }

  /**
   * A pool on {@code --jdbc-url}, which reaches the database before it returns.
   *
   * @throws ExampleFailure naming the database, without its password, and what to do
   */
  static HikariDataSource pool(String jdbcUrl, int poolSize) {
    try {
      return InboxDataSources.pool(jdbcUrl, null, null, poolSize);
    } catch (RuntimeException e) {
      throw CommandErrors.database("cannot connect to", jdbcUrl, e);
    }
  }

  /**
   * Flyway takes a lock, so that processes starting together migrate once. The pool has already
   * reached the database, so a failure here that a connection caused (a terminated backend, a
   * database restarting) is retried for a while rather than failing the process's start.
   */
  private void migrate(InboxSettings settings) {
    for (int attempt = 1; ; attempt++) {
      try {
        PaymentsDatabase.migrate(dataSource, settings);
        return;
      } catch (RuntimeException e) {
        if (attempt == MIGRATION_ATTEMPTS || !causedBySql(e)) {
          throw e;
        }
        System.err.println(
            "migration attempt "
                + attempt
                + " failed, retrying in 1 s: "
                + InboxDataSources.maskPasswords(e.toString()));
        try {
          Thread.sleep(1_000);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  private static boolean causedBySql(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    inbox.close();
    dataSource.close();
  }
}
