package dev.inbox.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/** Pools and schemas on this JVM's {@link TestDatabase}. */
public final class TestDataSources {
  private TestDataSources() {}

  /** A HikariCP pool on this JVM's test database. */
  public static HikariDataSource pool(int maxPoolSize) {
    return pool(maxPoolSize, true);
  }

  /**
   * A HikariCP pool whose connections come out with the given auto-commit, as with Spring Boot's
   * {@code spring.datasource.hikari.auto-commit=false}.
   */
  public static HikariDataSource pool(int maxPoolSize, boolean autoCommit) {
    TestDatabase db = TestDatabase.shared();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    if (db.user() != null) {
      config.setUsername(db.user());
    }
    if (db.password() != null) {
      config.setPassword(db.password());
    }
    config.setMaximumPoolSize(maxPoolSize);
    config.setPoolName("test");
    config.setConnectionTimeout(30_000);
    config.setAutoCommit(autoCommit);
    return new HikariDataSource(config);
  }

  /** A new, empty schema with a random name, so that each test class has its own tables. */
  public static String newSchema(String prefix) {
    String schema = prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    try (Connection c = TestDatabase.shared().connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create schema " + schema, e);
    }
    return schema;
  }
}
