package dev.inbox.examples;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;

/** A throw-away PostgreSQL 17 server from zonky's embedded binaries; it works as root too. */
final class EmbeddedDatabase implements AutoCloseable {
  private final EmbeddedPostgres postgres;

  private EmbeddedDatabase(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  static EmbeddedDatabase start() {
    try {
      return new EmbeddedDatabase(
          EmbeddedPostgres.builder()
              .setServerConfig("max_connections", "200")
              .setServerConfig("fsync", "on")
              .start());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the embedded PostgreSQL", e);
    }
  }

  String jdbcUrl() {
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  @Override
  public void close() {
    try {
      postgres.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
