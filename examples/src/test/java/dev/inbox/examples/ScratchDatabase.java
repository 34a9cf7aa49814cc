package dev.inbox.examples;

import dev.inbox.testing.TestDatabase;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * A database of a run's own, created on the tests' PostgreSQL and dropped afterwards, because the
 * demo's and the fault suite's checks count every payment row. Its URL carries the user and
 * password, as a command-line user would pass them; {@link ExampleProcess} keeps them off the
 * children's command lines.
 */
final class ScratchDatabase implements AutoCloseable {
  final String name;
  final String jdbcUrl;

  private ScratchDatabase(String name) throws Exception {
    this.name = name;
    TestDatabase db = TestDatabase.shared();
    try (var c = db.connect();
        var s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    String url = db.jdbcUrl().replace("/" + db.databaseName(), "/" + name);
    StringBuilder withCredentials = new StringBuilder(url);
    char separator = url.contains("?") ? '&' : '?';
    if (db.user() != null) {
      withCredentials.append(separator).append("user=").append(encode(db.user()));
      separator = '&';
    }
    if (db.password() != null) {
      withCredentials.append(separator).append("password=").append(encode(db.password()));
    }
    this.jdbcUrl = withCredentials.toString();
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /**
   * @param prefix letters only; a unique suffix is added
   */
  static ScratchDatabase create(String prefix) throws Exception {
    return new ScratchDatabase(prefix + "_" + Long.toString(System.nanoTime(), 36));
  }

  /** FORCE, because a killed process's connections may not have timed out yet. */
  @Override
  public void close() throws Exception {
    try (var c = TestDatabase.shared().connect();
        var s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }
}
