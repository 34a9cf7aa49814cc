package dev.inbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.regex.Pattern;

/**
 * Builds a HikariCP pool suited to the inbox from a JDBC URL: a convenience, since the inbox takes
 * any {@link javax.sql.DataSource}.
 *
 * <p>HikariCP is an optional dependency of this library: {@link #pool} needs it on the class path
 * (add {@code com.zaxxer:HikariCP} to your build), and without it throws {@link
 * NoClassDefFoundError}. {@link #maskPasswords} needs nothing. No other class of the library loads
 * a HikariCP class.
 */
public final class InboxDataSources {
  /** Ten connections: enough for a consumer and an API on one instance. */
  public static final int DEFAULT_POOL_SIZE = 10;

  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("(?i)(password\\s*=\\s*)[^&;,\\s'\"]+");
  private static final Pattern USER_INFO_PASSWORD =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\\s]*):[^@/?#\\s]*@");

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
              + maskPasswords(jdbcUrl));
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
   * The text with every password in it replaced by {@code ***}: {@code password=} parameters of a
   * JDBC URL (and any {@code ...password=} such as {@code sslpassword=}) and the password of a
   * URI's user info, as in {@code amqp://user:secret@host}. For anything meant for a log or a
   * person: a mistyped URL must never put a password there.
   */
  public static String maskPasswords(String text) {
    if (text == null) {
      return null;
    }
    String masked = PASSWORD_PARAMETER.matcher(text).replaceAll("$1***");
    return USER_INFO_PASSWORD.matcher(masked).replaceAll("$1:***@");
  }
}
