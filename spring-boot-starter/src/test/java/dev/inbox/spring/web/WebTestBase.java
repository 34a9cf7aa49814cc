package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inbox.Inbox;
import dev.inbox.spring.TestApplication;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.mock.http.MockHttpInputMessage;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

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
  @Autowired RequestMappingHandlerAdapter mvc;

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

  /**
   * The body as the application's own message converters read a {@link ProblemDetail}, after
   * checking that it is well-formed UTF-8 (a byte in another charset fails the test).
   */
  ProblemDetail problemDetail(byte[] body) throws Exception {
    StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(body));
    MockHttpInputMessage input = new MockHttpInputMessage(body);
    input.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
    for (HttpMessageConverter<?> converter : mvc.getMessageConverters()) {
      if (converter.canRead(ProblemDetail.class, MediaType.APPLICATION_PROBLEM_JSON)) {
        @SuppressWarnings("unchecked")
        HttpMessageConverter<ProblemDetail> reader =
            (HttpMessageConverter<ProblemDetail>) converter;
        return reader.read(ProblemDetail.class, input);
      }
    }
    throw new AssertionError("the application has no converter that reads a ProblemDetail");
  }

  /** Asserts what every refusal has, and returns the problem for the rest. */
  ProblemDetail assertProblemDetail(HttpResponse<byte[]> response, int status, String rule)
      throws Exception {
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.headers().allValues("Content-Type"))
        .singleElement()
        .asString()
        .startsWith("application/problem+json");
    ProblemDetail problem = problemDetail(response.body());
    assertThat(problem.getType()).isEqualTo(URI.create("about:blank"));
    assertThat(problem.getStatus()).isEqualTo(status);
    assertThat(problem.getTitle()).isNotBlank();
    assertThat(problem.getDetail()).isNotBlank();
    assertThat(problem.getInstance()).isNotNull();
    assertThat(problem.getProperties()).containsEntry("rule", rule);
    return problem;
  }

  static JsonNode json(String body) throws Exception {
    return JSON.readTree(body);
  }

  static boolean replayed(HttpResponse<?> response) {
    return response.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
  }
}
