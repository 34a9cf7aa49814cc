package dev.inbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * The inbox table's schema, as Flyway migrations shipped in this jar.
 *
 * <p>They live under their own location ({@value #LOCATION}) with their own history table ({@code
 * <table>_schema_history}), so they never clash with the application's own Flyway. Teams on
 * Liquibase or their own tooling take the plain SQL from {@link #sql}.
 *
 * <p>One row per (scope, key). Its states, and every move the SQL makes between them, are in one
 * file: {@code dev/inbox/internal/StateMachine.java}. The first migration's comment still says "see
 * dev.inbox.Inbox": Flyway checksums a migration's whole text, comments included, so editing it
 * would fail validation on every database already migrated.
 *
 * <p>The second migration adds {@code <table>_audit}, where every operator's release and settle is
 * recorded with the record before and after, and {@code <table>_purges}, the last purge's time and
 * count for {@link InboxAdmin#stats}.
 */
public final class InboxSchema {
  /** Where the migrations are on the class path. */
  public static final String LOCATION = "classpath:dev/inbox/db/migration";

  /**
   * Where the migrations of {@link Storage#PARTITIONED} are on the class path. Their history table
   * is {@code <table>_partitioned_schema_history}, so that a database migrated for the plain table
   * can be migrated again for the partitioned one: the first of them turns a live plain table into
   * the first generation.
   */
  public static final String PARTITIONED_LOCATION = "classpath:dev/inbox/db/partitioned";

  /** The migration scripts, in order. */
  static final List<String> SCRIPTS = List.of("V1__create_inbox_table.sql", "V2__inbox_audit.sql");

  /** The migration scripts of {@link Storage#PARTITIONED}, in order. */
  static final List<String> PARTITIONED_SCRIPTS =
      List.of("V1__partitioned_inbox.sql", "V2__inbox_audit.sql");

  private InboxSchema() {}

  /**
   * Creates or upgrades the inbox table; running it again does nothing. Creates the schema if
   * missing. An application's own tables and Flyway history in the same schema are left alone.
   */
  public static void migrate(DataSource dataSource, InboxSettings settings) {
    flyway(dataSource, settings).migrate();
  }

  /**
   * The Flyway instance {@link #migrate} uses, for callers who want {@code info()} or {@code
   * validate()}.
   */
  public static Flyway flyway(DataSource dataSource, InboxSettings settings) {
    boolean partitioned = settings.storage() == Storage.PARTITIONED;
    return Flyway.configure(InboxSchema.class.getClassLoader())
        .dataSource(dataSource)
        .locations(partitioned ? PARTITIONED_LOCATION : LOCATION)
        .schemas(settings.schema())
        .defaultSchema(settings.schema())
        .createSchemas(true)
        .table(settings.table() + (partitioned ? "_partitioned_schema_history" : "_schema_history"))
        // An application's own tables in the same schema must not stop our first migration.
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .placeholders(placeholders(settings))
        .load();
  }

  /** The plain SQL of every migration, with the schema and table names filled in. */
  public static String sql(InboxSettings settings) {
    boolean partitioned = settings.storage() == Storage.PARTITIONED;
    StringBuilder sql = new StringBuilder();
    for (String script : partitioned ? PARTITIONED_SCRIPTS : SCRIPTS) {
      String text = read("/dev/inbox/db/" + (partitioned ? "partitioned/" : "migration/") + script);
      for (Map.Entry<String, String> placeholder : placeholders(settings).entrySet()) {
        text = text.replace("${" + placeholder.getKey() + "}", placeholder.getValue());
      }
      sql.append("-- ").append(script).append('\n').append(text).append('\n');
    }
    return sql.toString();
  }

  /**
   * The schema is quoted, since it comes first in {@code schema.table}, where PostgreSQL takes no
   * reserved word. The table is not: after the dot any word is a name, and the scripts also make
   * constraint and index names from it by appending to it. Flyway keeps a script's checksum from
   * its text before the placeholders are filled in, so quoting changes no checksum.
   */
  private static Map<String, String> placeholders(InboxSettings settings) {
    if (settings.storage() == Storage.PARTITIONED) {
      // The partitioned scripts also name the schema inside string literals, unquoted.
      return Map.of(
          "inbox_schema",
          '"' + settings.schema() + '"',
          "inbox_schema_name",
          settings.schema(),
          "inbox_table",
          settings.table());
    }
    return Map.of("inbox_schema", '"' + settings.schema() + '"', "inbox_table", settings.table());
  }

  /**
   * The layout of the inbox table as the database has it: {@link Storage#PARTITIONED} for a
   * partitioned table, {@link Storage#TABLE} for a plain one, empty when there is no such table
   * (not migrated yet). An inbox refuses to start on a layout other than its setting's.
   *
   * @throws InboxDatabaseException when the database cannot be asked
   */
  public static Optional<Storage> storage(DataSource dataSource, InboxSettings settings) {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement ps =
            connection.prepareStatement(
                "SELECT c.relkind FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
                    + " ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?")) {
      ps.setString(1, settings.schema());
      ps.setString(2, settings.table());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of("p".equals(rs.getString(1)) ? Storage.PARTITIONED : Storage.TABLE);
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(
          null, null, "reading the layout of " + settings.qualifiedTable() + " failed", e);
    }
  }

  /**
   * Refuses an inbox whose {@link InboxSettings#storage()} is not the table's layout: a plain
   * inbox's purge deletes by {@code ctid}, which on a partitioned table names rows of every
   * partition at once, and a partitioned inbox's upserts fail on a plain table.
   *
   * @throws IllegalStateException naming the setting to use
   */
  public static void requireLayout(DataSource dataSource, InboxSettings settings) {
    Optional<Storage> found = storage(dataSource, settings);
    if (found.isPresent() && found.get() != settings.storage()) {
      throw new IllegalStateException(
          settings.qualifiedTable()
              + " is "
              + (found.get() == Storage.PARTITIONED ? "a partitioned table" : "a plain table")
              + ", but the inbox is set to storage "
              + settings.storage()
              + "; set storage("
              + found.get()
              + ")"
              + (found.get() == Storage.TABLE
                  ? ", or migrate it to PARTITIONED with migrate(true) (docs/scale.md)"
                  : ""));
    }
  }

  private static String read(String resource) {
    try (InputStream in = InboxSchema.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            resource + " is missing from the jar, which indicates a bug");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
