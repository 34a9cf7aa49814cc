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
    dataSource = InboxDataSources.pool(jdbcUrl, null, null, poolSize);
    migrate(settings);
    inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(false).build();
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
        System.err.println("migration attempt " + attempt + " failed, retrying in 1 s: " + e);
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
