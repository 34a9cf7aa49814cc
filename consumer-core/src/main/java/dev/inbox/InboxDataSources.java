package dev.inbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/** Builds a HikariCP pool suited to the inbox from a JDBC URL. */
public final class InboxDataSources {
  /** Ten connections: enough for a consumer and an API on one instance. */
  public static final int DEFAULT_POOL_SIZE = 10;

  private InboxDataSources() {}

  /** A pool of {@value #DEFAULT_POOL_SIZE} connections; user and password may be in the URL. */
  public static HikariDataSource pool(String jdbcUrl) {
    return pool(jdbcUrl, null, null, DEFAULT_POOL_SIZE);
  }

  /**
   * A pool with READ COMMITTED (the claim relies on it), auto-commit on, server-side prepared
   * statements from the first use, and a start that fails fast when the database is unreachable.
   */
  public static HikariDataSource pool(
      String jdbcUrl, String user, String password, int maxPoolSize) {
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException(
          "jdbcUrl must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db), but was "
              + withoutPasswords(jdbcUrl));
    }
    if (maxPoolSize < 1) {
      throw new IllegalArgumentException("maxPoolSize must be at least 1, but was " + maxPoolSize);
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    if (user != null) {
      config.setUsername(user);
    }
    if (password != null) {
      config.setPassword(password);
    }
    config.setMaximumPoolSize(maxPoolSize);
    config.setPoolName("inbox");
    config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    config.setInitializationFailTimeout(10_000);
    config.setConnectionTimeout(10_000);
    config.addDataSourceProperty("prepareThreshold", "1");
    config.addDataSourceProperty("reWriteBatchedInserts", "true");
    config.addDataSourceProperty("tcpKeepAlive", "true");
    return new HikariDataSource(config);
  }

  /**
   * The URL with any password in it replaced by {@code ***} (a {@code password=} parameter, or the
   * {@code user:password@} of an authority), for error messages: a mistyped URL must never put a
   * password into a log.
   */
  static String withoutPasswords(String url) {
    if (url == null) {
      return null;
    }
    return url.replaceAll("(?i)(password=)[^&;]*", "$1***")
        .replaceAll("(//[^/@:?#]*):[^/@?#]*@", "$1:***@");
  }
}
