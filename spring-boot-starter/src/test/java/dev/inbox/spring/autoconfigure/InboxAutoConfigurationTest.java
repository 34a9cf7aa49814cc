package dev.inbox.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spring.InboxHealth;
import dev.inbox.spring.SpringCallerTransactions;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * One dependency and a DataSource give an Inbox bean, its table migrated, from inbox.* properties.
 */
@SpringBootTest(
    classes = TestApplication.class,
    properties = {
      "inbox.schema=boot_autoconfig",
      "inbox.max-attempts=3",
      "inbox.lock-timeout=2s",
      "inbox.janitor-interval=200ms"
    })
class InboxAutoConfigurationTest {
  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
  }

  @Autowired Inbox inbox;
  @Autowired CallerTransactions callerTransactions;
  @Autowired JdbcTemplate jdbc;
  @Autowired ApplicationContext context;
  @Autowired InboxHealth health;

  @Test
  void inbox_bean_runs_with_the_properties_and_its_table_is_migrated() {
    assertThat(inbox.settings().schema()).isEqualTo("boot_autoconfig");
    assertThat(inbox.settings().maxAttempts()).isEqualTo(3);
    assertThat(inbox.settings().lockTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(callerTransactions).isInstanceOf(SpringCallerTransactions.class);
    Integer history =
        jdbc.queryForObject(
            "SELECT count(*) FROM boot_autoconfig.inbox_schema_history WHERE success",
            Integer.class);
    assertThat(history).isGreaterThanOrEqualTo(1);
    Integer rows = jdbc.queryForObject("SELECT count(*) FROM boot_autoconfig.inbox", Integer.class);
    assertThat(rows).isZero();
  }

  @Test
  void health_indicator_hears_the_janitor_rounds() throws Exception {
    assertThat(context.containsBean("inboxHealthIndicator")).isTrue();
    Await.until(
        "the janitor's first round reaches the health indicator",
        Duration.ofSeconds(30),
        () -> health.report().details().containsKey("oldestInProgress"));
    assertThat(health.report().up()).isTrue();
    assertThat(health.report().details())
        .containsEntry("janitor", "alive")
        .containsEntry("oldestInProgress", "PT0S");
  }
}
