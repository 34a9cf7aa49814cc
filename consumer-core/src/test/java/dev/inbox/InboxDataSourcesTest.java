package dev.inbox;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class InboxDataSourcesTest {
  @Test
  void a_url_that_is_not_postgresql_is_refused_without_echoing_its_password() {
    assertThatThrownBy(
            () ->
                InboxDataSources.pool(
                    "jdbc:postgres://db:5432/pay?user=app&password=s3cret&ssl=true"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("password=***&ssl=true")
        .hasMessageNotContaining("s3cret");
    assertThatThrownBy(() -> InboxDataSources.pool("postgresql://app:s3cret@db:5432/pay"))
        .hasMessageContaining("//app:***@db:5432/pay")
        .hasMessageNotContaining("s3cret");
  }
}
