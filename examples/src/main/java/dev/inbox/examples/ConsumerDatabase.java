package dev.inbox.examples;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;

/** The payments database and inbox of a consumer or server process. */
final class ConsumerDatabase implements AutoCloseable {
  static final String LOCAL_URL = "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres";

  final HikariDataSource dataSource;
  final Inbox inbox;

  ConsumerDatabase(String jdbcUrl, int poolSize) {
    this(jdbcUrl, poolSize, InboxSettings.defaults());
  }

  ConsumerDatabase(String jdbcUrl, int poolSize, InboxSettings settings) {
    dataSource = InboxDataSources.pool(jdbcUrl, null, null, poolSize);
    // Flyway takes a lock, so that processes starting together migrate once.
    PaymentsDatabase.migrate(dataSource, settings);
    inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(false).build();
  }

  @Override
  public void close() {
    inbox.close();
    dataSource.close();
  }
}
