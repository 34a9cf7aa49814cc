package dev.inbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
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

  /** The migration scripts, in order. */
  static final List<String> SCRIPTS = List.of("V1__create_inbox_table.sql", "V2__inbox_audit.sql");

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
    return Flyway.configure(InboxSchema.class.getClassLoader())
        .dataSource(dataSource)
        .locations(LOCATION)
        .schemas(settings.schema())
        .defaultSchema(settings.schema())
        .createSchemas(true)
        .table(settings.table() + "_schema_history")
        // An application's own tables in the same schema must not stop our first migration.
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .placeholders(placeholders(settings))
        .load();
  }

  /** The plain SQL of every migration, with the schema and table names filled in. */
  public static String sql(InboxSettings settings) {
    StringBuilder sql = new StringBuilder();
    for (String script : SCRIPTS) {
      String text = read("/dev/inbox/db/migration/" + script);
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
    return Map.of("inbox_schema", '"' + settings.schema() + '"', "inbox_table", settings.table());
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
