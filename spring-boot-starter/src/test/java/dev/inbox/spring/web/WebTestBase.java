package dev.inbox.spring.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inbox.Inbox;
import dev.inbox.spring.TestApplication;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A real server on a random port, on PostgreSQL, with JPA (so the transaction manager is a {@code
 * JpaTransactionManager}) and Spring Security. The subclasses share one application context.
 */
@SpringBootTest(
    classes = WebTestApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "inbox.schema=" + WebTestApplication.SCHEMA,
      "inbox.lock-timeout=500ms",
      "inbox.retention=36h",
      "inbox.web.in-flight-wait=1s",
      "spring.jpa.hibernate.ddl-auto=none",
      "spring.jpa.open-in-view=false"
    })
abstract class WebTestBase {
  static final ObjectMapper JSON = new ObjectMapper();

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
  }

  @Value("${local.server.port}")
  int port;

  @Autowired JdbcTemplate jdbc;
  @Autowired Inbox inbox;

  WebClient client;

  @BeforeEach
  void tablesAndClient() {
    jdbc.execute(
        "CREATE TABLE IF NOT EXISTS "
            + WebTestApplication.SCHEMA
            + ".payments (id bigserial PRIMARY KEY, payer text NOT NULL, body text NOT NULL)");
    jdbc.execute(
        "CREATE TABLE IF NOT EXISTS "
            + WebTestApplication.SCHEMA
            + ".jpa_payments (id text PRIMARY KEY, payer text NOT NULL, body text NOT NULL)");
    client = new WebClient(port);
  }

  /** Rows with this body written through JdbcTemplate. */
  int jdbcEffects(String body) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM " + WebTestApplication.SCHEMA + ".payments WHERE body = ?",
        Integer.class,
        body);
  }

  /** Rows with this body written through JPA. */
  int jpaEffects(String body) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM " + WebTestApplication.SCHEMA + ".jpa_payments WHERE body = ?",
        Integer.class,
        body);
  }

  /** Exactly this many effects with the body, through JdbcTemplate and through JPA alike. */
  void assertEffects(String body, int effects) {
    org.assertj.core.api.Assertions.assertThat(jdbcEffects(body))
        .as("JdbcTemplate rows")
        .isEqualTo(effects);
    org.assertj.core.api.Assertions.assertThat(jpaEffects(body)).as("JPA rows").isEqualTo(effects);
  }

  static JsonNode json(String body) throws Exception {
    return JSON.readTree(body);
  }

  static boolean replayed(HttpResponse<?> response) {
    return response.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
  }
}
