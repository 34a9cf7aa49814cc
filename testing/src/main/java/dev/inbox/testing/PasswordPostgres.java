package dev.inbox.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * A throwaway PostgreSQL server (zonky's embedded binaries) whose {@code pg_hba.conf} demands a
 * SCRAM password from every role but the superuser {@code postgres}, as a Testcontainers or managed
 * database does. The machine's own server may trust every local connection (this one's does), and a
 * test on it cannot tell whether a password was passed at all; here a missing password fails with
 * "The server requested SCRAM-based authentication, but no password was provided".
 */
public final class PasswordPostgres implements AutoCloseable {
  private static final String HBA =
      String.join(
          "\n",
          "local all postgres trust",
          "host all postgres 127.0.0.1/32 trust",
          "host all postgres ::1/128 trust",
          "host all all 127.0.0.1/32 scram-sha-256",
          "host all all ::1/128 scram-sha-256",
          "");

  private final EmbeddedPostgres postgres;

  private PasswordPostgres(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  public static PasswordPostgres start() {
    try {
      return new PasswordPostgres(
          EmbeddedPostgres.builder()
              .setServerConfig("password_encryption", "scram-sha-256")
              .setDataDirectoryCustomizer(
                  dataDirectory -> {
                    try {
                      Files.writeString(dataDirectory.toPath().resolve("pg_hba.conf"), HBA);
                    } catch (IOException e) {
                      throw new UncheckedIOException(e);
                    }
                  })
              .start());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the embedded PostgreSQL", e);
    }
  }

  /** {@code jdbc:postgresql://127.0.0.1:PORT/DATABASE}, with no user and no password. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/" + database;
  }

  /** Creates a login role with this password and a database of the same name that it owns. */
  public void createRoleWithDatabase(String role, String password) throws SQLException {
    if (!role.matches("[a-z_][a-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("role must be a plain lower-case name, but was " + role);
    }
    try (Connection c = connectAsSuperuser("postgres");
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + password.replace("'", "''") + "'");
      s.execute("CREATE DATABASE " + role + " OWNER " + role);
    }
  }

  /** The superuser, who needs no password here. */
  public Connection connectAsSuperuser(String database) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("user", "postgres");
    return DriverManager.getConnection(jdbcUrl(database), properties);
  }

  @Override
  public void close() throws IOException {
    postgres.close();
  }
}
