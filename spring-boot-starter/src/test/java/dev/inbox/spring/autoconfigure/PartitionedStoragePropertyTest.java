package dev.inbox.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.Storage;
import dev.inbox.TransactionalHandler;
import dev.inbox.spring.TestApplication;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** inbox.storage=partitioned migrates the partitioned layout, and the inbox deduplicates on it. */
class PartitionedStoragePropertyTest {

  @Test
  void a_partitioned_inbox_is_migrated_and_takes_a_key_once() {
    String schema = "boot_partitioned";
    try (ConfigurableApplicationContext context =
        TestApplication.start("inbox.schema=" + schema, "inbox.storage=partitioned")) {
      Inbox inbox = context.getBean(Inbox.class);
      JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
      assertThat(inbox.settings().storage()).isEqualTo(Storage.PARTITIONED);
      assertThat(
              jdbc.queryForObject(
                  "SELECT c.relkind::text FROM pg_class c JOIN pg_namespace n"
                      + " ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = 'inbox'",
                  String.class,
                  schema))
          .as("relkind of %s.inbox: p, a partitioned table", schema)
          .isEqualTo("p");
      assertThat(
              jdbc.queryForObject(
                  "SELECT count(*) FROM pg_inherits WHERE inhparent = ?::regclass",
                  Integer.class,
                  schema + ".inbox"))
          .as("generations of %s.inbox", schema)
          .isGreaterThanOrEqualTo(1);

      String key = UUID.randomUUID().toString();
      AtomicInteger effects = new AtomicInteger();
      TransactionalHandler effect =
          tx -> {
            effects.incrementAndGet();
            return null;
          };
      ClaimOutcome first = inbox.execute("boot-partitioned", key, effect).outcome();
      ClaimOutcome second = inbox.execute("boot-partitioned", key, effect).outcome();
      assertThat(first).isEqualTo(ClaimOutcome.NEW);
      assertThat(second).isEqualTo(ClaimOutcome.DUPLICATE);
      assertThat(effects).hasValue(1);
    }
  }

  @Test
  void the_storage_defaults_to_a_plain_table() {
    assertThat(new InboxProperties().toSettings().build().storage()).isEqualTo(Storage.TABLE);
  }
}
