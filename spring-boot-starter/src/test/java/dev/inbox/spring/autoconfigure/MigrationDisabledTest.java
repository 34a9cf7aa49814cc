package dev.inbox.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Execution;
import dev.inbox.Inbox;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code inbox.migration.enabled=false}, for teams whose Liquibase (or own Flyway) owns the schema:
 * the starter creates nothing, not even its Flyway history, and logs the DDL to apply; once that
 * DDL has been applied, the inbox works on the table. Each test has a schema of its own.
 */
@ExtendWith(OutputCaptureExtension.class)
class MigrationDisabledTest {
  private static final TestDatabase DB = TestDatabase.shared();

  @Test
  void nothing_is_created_and_the_ddl_to_apply_is_logged(CapturedOutput output) throws Exception {
    String schema = "boot_nomigrate_" + UUID.randomUUID().toString().substring(0, 8);
    try (ConfigurableApplicationContext context = start(schema)) {
      assertThat(context.getBean(Inbox.class).settings().schema()).isEqualTo(schema);
      String expectedDdl = InboxSchema.sql(context.getBean(InboxSettings.class));
      assertThat(output.getOut())
          .contains("inbox.migration.enabled=false")
          .contains("expects its table \"" + schema + "\".\"inbox\" to exist")
          .contains(expectedDdl);
      assertThat(expectedDdl).contains("CREATE TABLE");
    }
    assertThat(query("SELECT count(*) FROM pg_namespace WHERE nspname = '" + schema + "'"))
        .as("the schema, let alone a table or a Flyway history, is never created")
        .isZero();
    assertThat(
            query(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'inbox%' AND schemaname = '"
                    + schema
                    + "'"))
        .isZero();
  }

  @Test
  void an_inbox_whose_table_was_created_from_the_logged_ddl_works() throws Exception {
    String schema = "boot_nomigrate_" + UUID.randomUUID().toString().substring(0, 8);
    InboxSettings settings = InboxSettings.builder().schema(schema).build();
    execute("CREATE SCHEMA " + schema);
    execute(InboxSchema.sql(settings));
    try {
      try (ConfigurableApplicationContext context = start(schema)) {
        Inbox inbox = context.getBean(Inbox.class);
        String key = UUID.randomUUID().toString();
        Execution first = inbox.execute("payments", key, tx -> null);
        Execution second = inbox.execute("payments", key, tx -> null);
        assertThat(first.outcome()).isEqualTo(ClaimOutcome.NEW);
        assertThat(second.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
      }
      assertThat(
              query(
                  "SELECT count(*) FROM pg_tables WHERE tablename LIKE '%schema_history'"
                      + " AND schemaname = '"
                      + schema
                      + "'"))
          .as("no Flyway history next to a table the application migrated itself")
          .isZero();
    } finally {
      execute("DROP SCHEMA " + schema + " CASCADE");
    }
  }

  private static ConfigurableApplicationContext start(String schema) {
    return TestApplication.start("inbox.schema=" + schema, "inbox.migration.enabled=false");
  }

  private static int query(String sql) throws Exception {
    try (Connection connection =
            DriverManager.getConnection(DB.jdbcUrl(), DB.user(), DB.password());
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery(sql)) {
      rows.next();
      return rows.getInt(1);
    }
  }

  private static void execute(String sql) throws Exception {
    try (Connection connection =
            DriverManager.getConnection(DB.jdbcUrl(), DB.user(), DB.password());
        Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
