package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Schema and table names are SQL identifiers, and a reserved word ({@code user}, {@code select}) is
 * one too: the inbox quotes them wherever it writes them, so such names work end to end, while a
 * name that is no lower-case identifier is refused before anything reaches the database.
 */
class ReservedWordNamesTest extends InboxTestSupport {

  @AfterEach
  void dropReservedSchemas() throws Exception {
    sql("DROP SCHEMA IF EXISTS \"user\" CASCADE");
    sql("DROP SCHEMA IF EXISTS \"select\" CASCADE");
  }

  private void exercise(InboxSettings settings, String table) throws Exception {
    Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build();
    inboxes.add(inbox);
    inbox.migrate(); // a second run finds its history table

    assertThat(inbox.execute("s", "k-1", tx -> null).outcome()).isEqualTo(ClaimOutcome.NEW);
    assertThat(inbox.execute("s", "k-1", tx -> null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(
            inbox
                .executeBatch(
                    "s",
                    List.of(BatchItem.of("k-2", 1L)),
                    BatchFailurePolicy.CONTINUE,
                    (item, tx) -> null)
                .items()
                .get(0)
                .status())
        .isEqualTo(ItemStatus.COMPLETED);
    Claim lease = inbox.leases().claim("s", "k-3", null);
    inbox.leases().complete(inbox.leases().renew(lease.leaseToken()), null);
    // A failed attempt counted, then a retry claimed through the record, with a result stored.
    executeFailing(inbox, "s", "k-4", null);
    assertThat(inbox.execute("s", "k-4", tx -> StoredResult.of(201, new byte[0])).outcome())
        .isEqualTo(ClaimOutcome.NEW);
    assertThat(inbox.admin().lookup("s", "k-4", null).map(Claim::outcome))
        .contains(ClaimOutcome.DUPLICATE);
    assertThat(inbox.admin().release("s", "k-4")).isEqualTo(ReleaseResult.NOT_RELEASABLE);
    assertThat(queryLong("SELECT count(*) FROM " + table)).isEqualTo(4);
    sql("UPDATE " + table + " SET completed_at = completed_at - interval '2 hours'");
    assertThat(inbox.admin().purgeExpired()).isEqualTo(4);
  }

  @Test
  void a_schema_and_a_table_named_by_reserved_words_work_end_to_end() throws Exception {
    InboxSettings settings =
        settings().schema("user").table("select").retention(Duration.ofHours(1)).build();
    exercise(settings, "\"user\".\"select\"");

    String ddl = InboxSchema.sql(settings);
    sql("DROP SCHEMA \"user\" CASCADE");
    sql("CREATE SCHEMA \"user\"");
    sql(ddl);
    assertThat(queryLong("SELECT count(*) FROM \"user\".\"select\"")).isZero();
  }

  @Test
  void an_ordinary_schema_and_table_work_as_before() throws Exception {
    InboxSettings settings =
        settings().schema(schema).table("dedup").retention(Duration.ofHours(1)).build();
    exercise(settings, schema + ".dedup");
    assertThat(InboxSchema.sql(settings)).contains(".dedup");
  }

  @Test
  void a_name_that_is_no_lower_case_identifier_is_refused_naming_the_setting_and_value() {
    for (String bad : new String[] {"User", "a-b", "x\"y", "1st", ""}) {
      assertThatThrownBy(() -> InboxSettings.builder().schema(bad))
          .as("schema %s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("schema must be")
          .hasMessageContaining("but was '" + bad + "'");
      assertThatThrownBy(() -> InboxSettings.builder().table(bad))
          .as("table %s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("table must be");
    }
  }
}
