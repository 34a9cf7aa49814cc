package dev.inbox.spring.kafka;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.spring.TestApplication;
import dev.inbox.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;

/** A listener the inbox cannot join stops the application at startup, saying what to add. */
class NotTransactionalListenerTest {

  @Component
  static class ForgotTransactional {
    @KafkaListener(topics = "payments", groupId = "forgetful")
    public void onPayment(String payload) {}
  }

  @Test
  void a_kafka_listener_without_transactional_fails_the_startup_with_what_to_add() {
    TestDatabase db = TestDatabase.shared();
    SpringApplicationBuilder application =
        new SpringApplicationBuilder(TestApplication.class, ForgotTransactional.class)
            .web(WebApplicationType.NONE)
            .properties(
                "spring.datasource.url=" + db.jdbcUrl(),
                "spring.datasource.username=" + db.user(),
                "spring.datasource.password=" + (db.password() == null ? "" : db.password()),
                "inbox.schema=boot_forgetful",
                "spring.kafka.bootstrap-servers=127.0.0.1:1");
    assertThatThrownBy(application::run)
        .rootCause()
        .hasMessageContaining(
            "@KafkaListener method " + ForgotTransactional.class.getName() + ".onPayment")
        .hasMessageContaining("is not transactional")
        .hasMessageContaining("annotate the method or its class with @Transactional");
  }
}
