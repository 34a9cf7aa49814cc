package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

class SettingsTest {

  @Test
  void impossible_settings_fail_fast_naming_the_setting_and_the_value() {
    assertThatThrownBy(() -> InboxSettings.builder().retention(Duration.ofHours(-1)))
        .hasMessage("retention must be positive, but was PT-1H");
    assertThatThrownBy(() -> InboxSettings.builder().retention(Duration.ZERO))
        .hasMessage("retention must be positive, but was PT0S");
    assertThatThrownBy(() -> InboxSettings.builder().maxAttempts(0))
        .hasMessage("maxAttempts must be at least 1, but was 0");
    assertThatThrownBy(
            () ->
                InboxSettings.builder()
                    .lockTimeout(Duration.ofSeconds(10))
                    .leaseDuration(Duration.ofSeconds(5))
                    .build())
        .hasMessage("leaseDuration must be longer than lockTimeout (PT10S), but was PT5S");
    assertThatThrownBy(() -> InboxSettings.builder().table("inbox; DROP TABLE x"))
        .hasMessageContaining("table must be a lower-case SQL identifier")
        .hasMessageContaining("inbox; DROP TABLE x");
    assertThatThrownBy(() -> InboxSettings.builder().schema("Public"))
        .hasMessageContaining("schema must be a lower-case SQL identifier");
    assertThatThrownBy(() -> InboxSettings.builder().purgeBatchSize(0))
        .hasMessage("purgeBatchSize must be at least 1, but was 0");
    assertThatThrownBy(() -> InboxSettings.builder().janitorInterval(Duration.ofSeconds(-1)))
        .hasMessageContaining("janitorInterval");
  }

  @Test
  void the_defaults_are_documented_values() {
    InboxSettings defaults = InboxSettings.defaults();
    assertThat(defaults.retention()).isEqualTo(Duration.ofHours(24));
    assertThat(defaults.maxAttempts()).isEqualTo(5);
    assertThat(defaults.qualifiedTable()).isEqualTo("\"public\".\"inbox\"");
  }

  @Test
  void an_unreachable_database_fails_fast_at_startup() {
    PGSimpleDataSource unreachable = new PGSimpleDataSource();
    unreachable.setURL("jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2");
    DataSource ds = unreachable;
    assertThatThrownBy(() -> Inbox.builder().dataSource(ds).build())
        .isInstanceOf(InboxDatabaseException.class)
        .hasMessageContaining("cannot reach its database at startup");
    assertThatThrownBy(() -> InboxDataSources.pool("jdbc:mysql://x/y"))
        .hasMessageContaining("jdbcUrl must be a PostgreSQL JDBC URL");
  }
}
