package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.testing.TestDatabase;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.TestComponent;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** An @Idempotent method whose writes could escape its key's transaction fails the startup. */
class IdempotentStartupCheckTest {

  @TestConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(EscapingEndpoint.class)
  static class EscapingApplication {}

  @RestController
  @TestComponent
  static class EscapingEndpoint {
    @Idempotent
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    @PostMapping("/escapes")
    String escapes() {
      return "never";
    }
  }

  @Test
  void requires_new_on_an_idempotent_method_fails_the_startup_naming_the_method() {
    TestDatabase db = TestDatabase.shared();
    SpringApplicationBuilder application =
        new SpringApplicationBuilder(EscapingApplication.class)
            .web(WebApplicationType.SERVLET)
            .properties(
                "server.port=0",
                "inbox.schema=" + WebTestApplication.SCHEMA,
                "spring.jpa.hibernate.ddl-auto=none",
                "spring.datasource.url=" + db.jdbcUrl(),
                "spring.datasource.username=" + db.user(),
                "spring.datasource.password=" + db.password());
    assertThatThrownBy(() -> application.run().close())
        .satisfies(
            e ->
                Assertions.assertThat(rootMessage(e))
                    .contains("EscapingEndpoint.escapes")
                    .contains("REQUIRES_NEW")
                    .contains("use REQUIRED"));
  }

  private static String rootMessage(Throwable e) {
    StringBuilder messages = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    return messages.toString();
  }
}
