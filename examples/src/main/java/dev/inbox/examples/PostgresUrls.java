package dev.inbox.examples;

import dev.inbox.InboxDataSources;
import java.util.Properties;
import org.postgresql.Driver;

/** What the examples say about a PostgreSQL JDBC URL: where it points, never its password. */
final class PostgresUrls {
  private static final String PREFIX = "jdbc:postgresql://";

  private PostgresUrls() {}

  /** {@code host:port/database} of the URL, as pgjdbc reads it; masked text if it cannot. */
  static String where(String jdbcUrl) {
    Properties parsed = parse(jdbcUrl);
    if (parsed == null) {
      String rest = jdbcUrl.startsWith(PREFIX) ? jdbcUrl.substring(PREFIX.length()) : jdbcUrl;
      int query = rest.indexOf('?');
      return InboxDataSources.maskPasswords(query < 0 ? rest : rest.substring(0, query));
    }
    String[] hosts = parsed.getProperty("PGHOST", "").split(",");
    String[] ports = parsed.getProperty("PGPORT", "").split(",");
    StringBuilder where = new StringBuilder();
    for (int i = 0; i < hosts.length; i++) {
      where.append(i == 0 ? "" : ",").append(hosts[i]);
      if (i < ports.length && !ports[i].isEmpty()) {
        where.append(':').append(ports[i]);
      }
    }
    return where + "/" + parsed.getProperty("PGDBNAME", "");
  }

  /** Whether pgjdbc can read the URL at all (a port that is not a number, for one, it cannot). */
  static boolean isValid(String jdbcUrl) {
    return parse(jdbcUrl) != null;
  }

  private static Properties parse(String jdbcUrl) {
    return jdbcUrl == null ? null : Driver.parseURL(jdbcUrl, null);
  }
}
