package dev.inbox.testing;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.UUID;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.containers.PostgreSQLContainer;

/**
 * A fresh PostgreSQL database for this test JVM, so that runs never see each other's rows.
 *
 * <p>The server is found in this order: the JDBC URL in the system property {@value #PROPERTY} or
 * the environment variable {@value #ENVIRONMENT}; then a Testcontainers PostgreSQL when Docker is
 * available; then the local server at 127.0.0.1:5432 as user {@code postgres} (trust auth). On that
 * server a new database {@code inbox_test_<random>} is created, and dropped when the JVM exits.
 *
 * <p>Whichever it is, the user and password travel apart from the URL: {@link #jdbcUrl()} carries
 * neither (an explicit URL's {@code user=} and {@code password=} are taken out of it into {@link
 * #user()} and {@link #password()}), as with Testcontainers, so that a URL handed to a child
 * process or printed never holds the password. {@link ChildJvm} passes the password on privately.
 */
public final class TestDatabase {
  public static final String PROPERTY = "inbox.test.jdbc-url";
  public static final String ENVIRONMENT = "INBOX_TEST_JDBC_URL";
  public static final String LOCAL_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";

  private static final Logger log = LoggerFactory.getLogger(TestDatabase.class);
  private static volatile TestDatabase shared;

  private final String serverUrl;
  private final String user;
  private final String password;
  private final String databaseName;
  private final String jdbcUrl;

  private TestDatabase(String serverUrl, String user, String password) {
    this.serverUrl = serverUrl;
    this.user = user;
    this.password = password;
    this.databaseName =
        "inbox_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    this.jdbcUrl = withDatabase(serverUrl, databaseName);
  }

  /** The database of this JVM, created on first use. */
  public static TestDatabase shared() {
    TestDatabase db = shared;
    if (db == null) {
      synchronized (TestDatabase.class) {
        db = shared;
        if (db == null) {
          db = start();
          shared = db;
        }
      }
    }
    return db;
  }

  private static TestDatabase start() {
    String explicit = Settings.explicit(PROPERTY, ENVIRONMENT);
    TestDatabase db;
    if (explicit != null) {
      log.info("tests use the PostgreSQL server from {}", PROPERTY);
      db = explicit(explicit);
    } else if (Docker.isAvailable()) {
      PostgreSQLContainer<?> container = new PostgreSQLContainer<>("postgres:17-alpine");
      container.start();
      Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-test-postgres"));
      log.info("tests use a Testcontainers PostgreSQL at {}", container.getJdbcUrl());
      db =
          new TestDatabase(
              container.getJdbcUrl(), container.getUsername(), container.getPassword());
    } else {
      log.info("no Docker; tests use the local PostgreSQL at {}", LOCAL_URL);
      db = new TestDatabase(LOCAL_URL, "postgres", null);
    }
    db.create();
    Runtime.getRuntime().addShutdownHook(new Thread(db::dropQuietly, "drop-test-database"));
    return db;
  }

  /** The JDBC URL of this JVM's own database. */
  public String jdbcUrl() {
    return jdbcUrl;
  }

  /** The user to connect as, or null when the URL carries it. */
  public String user() {
    return user;
  }

  public String password() {
    return password;
  }

  public String databaseName() {
    return databaseName;
  }

  /** A new connection to this JVM's database. */
  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl, properties());
  }

  /**
   * A plain pgjdbc data source on this JVM's database: a new connection per call, no pool, so that
   * a test shows the inbox needs nothing but a {@code DataSource}.
   */
  public PGSimpleDataSource simpleDataSource() {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setUrl(jdbcUrl);
    if (user != null) {
      dataSource.setUser(user);
    }
    if (password != null) {
      dataSource.setPassword(password);
    }
    return dataSource;
  }

  /** Connection properties with the user and password, if any. */
  public Properties properties() {
    Properties properties = new Properties();
    if (user != null) {
      properties.setProperty("user", user);
    }
    if (password != null) {
      properties.setProperty("password", password);
    }
    return properties;
  }

  private void create() {
    try (Connection admin = DriverManager.getConnection(serverUrl, properties());
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + databaseName);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot create test database "
              + databaseName
              + " on "
              + serverUrl
              + "; set "
              + PROPERTY
              + " or "
              + ENVIRONMENT
              + " to a PostgreSQL JDBC URL, or start PostgreSQL on 127.0.0.1:5432",
          e);
    }
  }

  private void dropQuietly() {
    try (Connection admin = DriverManager.getConnection(serverUrl, properties());
        Statement statement = admin.createStatement()) {
      statement.execute("DROP DATABASE IF EXISTS " + databaseName + " WITH (FORCE)");
    } catch (SQLException e) {
      log.debug("could not drop test database {}", databaseName, e);
    }
  }

  /** An explicit URL's user and password, taken out of its query into fields of their own. */
  static TestDatabase explicit(String url) {
    int query = url.indexOf('?');
    if (query < 0) {
      return new TestDatabase(url, null, null);
    }
    String user = null;
    String password = null;
    StringBuilder rest = new StringBuilder();
    for (String parameter : url.substring(query + 1).split("&")) {
      int eq = parameter.indexOf('=');
      String name = eq < 0 ? parameter : parameter.substring(0, eq);
      // Decoded as pgjdbc decodes URL parameters.
      String value =
          eq < 0 ? "" : URLDecoder.decode(parameter.substring(eq + 1), StandardCharsets.UTF_8);
      if (name.equals("user")) {
        user = value;
      } else if (name.equals("password")) {
        password = value;
      } else if (!parameter.isEmpty()) {
        rest.append(rest.length() == 0 ? "?" : "&").append(parameter);
      }
    }
    return new TestDatabase(url.substring(0, query) + rest, user, password);
  }

  static String withDatabase(String url, String database) {
    int query = url.indexOf('?');
    String base = query < 0 ? url : url.substring(0, query);
    String params = query < 0 ? "" : url.substring(query);
    int slash = base.indexOf('/', "jdbc:postgresql://".length());
    if (slash < 0) {
      return base + "/" + database + params;
    }
    return base.substring(0, slash + 1) + database + params;
  }
}
