package dev.inbox.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.spring.TestApplication;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The application's own Flyway (spring.flyway) and the inbox on one fresh schema: Boot's Flyway
 * migrates first and finds the schema empty (it refuses a non-empty schema without its history
 * table), then the inbox's migration, then JdbcTemplate users. Each test has a schema of its own.
 */
class ApplicationFlywayTest {

  @Test
  void the_applications_flyway_and_the_inbox_migrate_one_fresh_schema_in_that_order() {
    String schema = "boot_appflyway_" + UUID.randomUUID().toString().substring(0, 8);
    try (ConfigurableApplicationContext context = start(schema)) {
      JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
      assertThat(
              jdbc.queryForList(
                  "SELECT type FROM " + schema + ".flyway_schema_history ORDER BY installed_rank",
                  String.class))
          .as("Boot's Flyway created the schema, so it came first, and needed no baseline")
          .containsExactly("SCHEMA", "SQL");
      assertThat(
              jdbc.queryForObject(
                  "SELECT count(*) FROM " + schema + ".inbox_schema_history WHERE success",
                  Integer.class))
          .isGreaterThanOrEqualTo(1);

      Inbox inbox = context.getBean(Inbox.class);
      String key = UUID.randomUUID().toString();
      int[] effects = {0};
      for (int delivery = 0; delivery < 2; delivery++) {
        inbox.execute(
            "payments",
            key,
            tx -> {
              effects[0]++;
              return null;
            });
      }
      assertThat(effects[0]).isEqualTo(1);
      assertThat(inbox.execute("payments", key, tx -> null).outcome())
          .isEqualTo(ClaimOutcome.DUPLICATE);

      assertThat(dependsOn(context, "inboxMigration")).contains("flywayInitializer");
      assertThat(dependsOn(context, "jdbcTemplate"))
          .contains("flywayInitializer", "inboxMigration");
      assertThat(dependsOn(context, "inbox")).contains("flywayInitializer", "inboxMigration");
    }
  }

  /** The beans that Boot's ordering creates before this one, directly or through another. */
  private static Set<String> dependsOn(ConfigurableApplicationContext context, String bean) {
    Set<String> all = new HashSet<>();
    Deque<String> next = new ArrayDeque<>(List.of(bean));
    while (!next.isEmpty()) {
      String[] direct = context.getBeanFactory().getBeanDefinition(next.pop()).getDependsOn();
      for (String name : direct == null ? new String[0] : direct) {
        if (all.add(name)) {
          next.push(name);
        }
      }
    }
    return all;
  }

  private static ConfigurableApplicationContext start(String schema) {
    return TestApplication.start(
        "spring.flyway.default-schema=" + schema,
        "spring.flyway.locations=classpath:db/app-flyway",
        "inbox.schema=" + schema);
  }
}
