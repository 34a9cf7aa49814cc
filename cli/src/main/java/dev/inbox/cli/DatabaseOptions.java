package dev.inbox.cli;

import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Option;

/**
 * Where the inbox table is and how to reach it; mixed into every command. The URL, user and
 * password may come from the environment, so that a password never has to be on a command line.
 */
final class DatabaseOptions {
  @Option(
      names = "--url",
      defaultValue = "${env:INBOX_DB_URL}",
      description =
          "PostgreSQL JDBC URL, such as jdbc:postgresql://db:5432/payments"
              + " (default: $INBOX_DB_URL).")
  String url;

  @Option(
      names = "--user",
      defaultValue = "${env:INBOX_DB_USER}",
      description = "Database user (default: $INBOX_DB_USER, or the URL's).")
  String user;

  @Option(
      names = "--password",
      arity = "0..1",
      interactive = true,
      defaultValue = "${env:INBOX_DB_PASSWORD}",
      description =
          "Database password; without a value it is asked for (default: $INBOX_DB_PASSWORD,"
              + " or the URL's, or ~/.pgpass).")
  String password;

  @Option(
      names = "--schema",
      defaultValue = InboxSettings.DEFAULT_SCHEMA,
      description = "Schema of the inbox table (default: ${DEFAULT-VALUE}).")
  String schema;

  @Option(
      names = "--table",
      defaultValue = InboxSettings.DEFAULT_TABLE,
      description = "Name of the inbox table (default: ${DEFAULT-VALUE}).")
  String table;

  @Option(
      names = "--max-attempts",
      defaultValue = "" + InboxSettings.DEFAULT_MAX_ATTEMPTS,
      description =
          "The application's maxAttempts, to count keys that gave up (default: ${DEFAULT-VALUE}).")
  int maxAttempts;

  @Option(
      names = "--lock-timeout",
      defaultValue = "5s",
      converter = DurationConverter.class,
      description =
          "How long release and settle wait for a claimant holding the key (default:"
              + " ${DEFAULT-VALUE}).")
  Duration lockTimeout;

  @Option(names = "--verbose", description = "Print the stack trace of a failure.")
  boolean verbose;

  /** An inbox on the table, without janitor and without migrating anything. */
  Inbox open(Duration retention) {
    if (url == null || url.isBlank()) {
      throw CliFailure.usage("no database given; pass --url or set INBOX_DB_URL");
    }
    if (!url.startsWith("jdbc:postgresql:")) {
      throw CliFailure.usage(
          "--url must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db), but was "
              + InboxDataSources.maskPasswords(url));
    }
    InboxSettings.Builder settings =
        InboxSettings.builder()
            .schema(schema)
            .table(table)
            .maxAttempts(maxAttempts)
            .lockTimeout(lockTimeout)
            // The CLI takes no lease, but the settings require a lease longer than the lock wait:
            // a --lock-timeout of the default lease or more would otherwise be refused.
            .leaseDuration(
                lockTimeout.compareTo(InboxSettings.DEFAULT_LEASE_DURATION) < 0
                    ? InboxSettings.DEFAULT_LEASE_DURATION
                    : lockTimeout.plus(InboxSettings.DEFAULT_LEASE_DURATION))
            .janitorInterval(Duration.ZERO);
    if (retention != null) {
      settings.retention(retention);
    }
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(url);
    if (user != null && !user.isBlank()) {
      dataSource.setUser(user);
    }
    if (password != null && !password.isEmpty()) {
      dataSource.setPassword(password);
    }
    dataSource.setApplicationName("inbox-cli");
    dataSource.setConnectTimeout(10);
    settings.storage(layout(dataSource, settings.build()));
    return Inbox.builder().dataSource(dataSource).settings(settings.build()).build();
  }

  /**
   * The table's own layout, so that the CLI works on both: a partitioned table's purge rotates and
   * retires generations. A database that cannot be asked is reported by the builder's own check.
   */
  private static Storage layout(PGSimpleDataSource dataSource, InboxSettings settings) {
    try {
      return InboxSchema.storage(dataSource, settings).orElse(Storage.TABLE);
    } catch (InboxDatabaseException e) {
      return Storage.TABLE;
    }
  }

  /** Who the audit names when --actor is not given: the operating system's user. */
  static String osUser() {
    String name = System.getProperty("user.name");
    return name == null || name.isBlank() ? "unknown" : name;
  }
}
