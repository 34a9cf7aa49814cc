package dev.inbox.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TestDatabaseTest {

  @Test
  void an_explicit_urls_user_and_password_travel_apart_from_it() {
    TestDatabase db =
        TestDatabase.explicit(
            "jdbc:postgresql://db.example:6543/app?sslmode=require&user=ci&password=p%3Aw%26x&connectTimeout=5");
    assertThat(db.user()).isEqualTo("ci");
    assertThat(db.password()).isEqualTo("p:w&x");
    assertThat(db.jdbcUrl())
        .startsWith("jdbc:postgresql://db.example:6543/inbox_test_")
        .endsWith("?sslmode=require&connectTimeout=5")
        .doesNotContain("password")
        .doesNotContain("user=");
  }

  @Test
  void an_explicit_url_without_credentials_is_kept_as_it_is() {
    TestDatabase db = TestDatabase.explicit("jdbc:postgresql://127.0.0.1:5432/postgres");
    assertThat(db.user()).isNull();
    assertThat(db.password()).isNull();
    assertThat(db.jdbcUrl()).matches("jdbc:postgresql://127\\.0\\.0\\.1:5432/inbox_test_\\w+");
  }
}
