package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

class MigrationTest extends InboxTestSupport {

  @Test
  void the_migration_runs_twice_without_error() throws Exception {
    InboxSettings settings = settings().build();
    InboxSchema.migrate(dataSource, settings);
    InboxSchema.migrate(dataSource, settings);
    // The schema's creation and both migrations (the table; the audit), each recorded once.
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".inbox_schema_history WHERE success"))
        .isEqualTo(3);
    assertThat(inboxRows()).isZero();
  }

  @Test
  void the_migration_lives_beside_an_applications_own_flyway_history() throws Exception {
    // The application's own Flyway, with its default history table, in the same schema.
    // The schema already holds the test's effects table, as an application's schema would.
    Flyway.configure()
        .dataSource(dataSource)
        .schemas(schema)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .locations("classpath:app/db/migration")
        .load()
        .migrate();
    assertThat(
            queryLong(
                "SELECT count(*) FROM " + schema + ".flyway_schema_history WHERE version = '1'"))
        .isEqualTo(1);

    Inbox inbox = inbox();
    assertThat(inbox.execute("s", "k", tx -> null).executed()).isTrue();

    // The application migrates again: our history table does not confuse it, and vice versa.
    // The schema already holds the test's effects table, as an application's schema would.
    Flyway.configure()
        .dataSource(dataSource)
        .schemas(schema)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .locations("classpath:app/db/migration")
        .load()
        .migrate();
    inbox.migrate();
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".accounts")).isZero();
    assertThat(
            queryLong(
                "SELECT count(*) FROM " + schema + ".flyway_schema_history WHERE version = '1'"))
        .isEqualTo(1);
  }

  @Test
  void a_custom_schema_and_table_are_created_and_the_plain_sql_names_them() throws Exception {
    InboxSettings settings = settings().schema(schema + "_x").table("dedup").build();
    Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build();
    inboxes.add(inbox);
    assertThat(inbox.execute("s", "k", tx -> null).executed()).isTrue();
    assertThat(queryLong("SELECT count(*) FROM " + schema + "_x.dedup")).isEqualTo(1);

    String sql = InboxSchema.sql(settings);
    assertThat(sql).contains("CREATE TABLE \"" + schema + "_x\".dedup").doesNotContain("${");
  }

  @Test
  void a_table_migrated_with_the_unquoted_schema_placeholder_still_validates() throws Exception {
    // How releases before quoting filled the placeholders in; Flyway checks the checksums.
    Flyway.configure(InboxSchema.class.getClassLoader())
        .dataSource(dataSource)
        .locations(InboxSchema.LOCATION)
        .schemas(schema)
        .defaultSchema(schema)
        .table("inbox_schema_history")
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .placeholders(java.util.Map.of("inbox_schema", schema, "inbox_table", "inbox"))
        .load()
        .migrate();

    Inbox inbox = inbox();
    InboxSchema.flyway(dataSource, settings().build()).validate();
    assertThat(inbox.execute("s", "k", tx -> null).executed()).isTrue();
    assertThat(inboxRows()).isEqualTo(1);
  }
}
