package dev.inbox.spring.actuate;

import static dev.inbox.spring.actuate.EndpointClient.failedKey;
import static dev.inbox.spring.actuate.EndpointClient.newScope;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.AuditEntry;
import dev.inbox.RecordState;
import dev.inbox.spring.TestApplication;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * With Spring Security, the README's rules: reads open, writes for role OPS over HTTP Basic. The
 * audit trail names the principal, never the fallback actor.
 */
@SpringBootTest(
    classes = {TestApplication.class, InboxEndpointSecurityTest.ActuatorRules.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "inbox.schema=boot_actuator",
      "management.endpoints.web.exposure.include=inbox",
      "spring.security.user.name=alice",
      "spring.security.user.password=s3cret",
      "spring.security.user.roles=OPS"
    })
class InboxEndpointSecurityTest extends ServerTest {

  @Test
  void an_unauthenticated_write_is_refused_and_an_authorised_one_is_audited_as_the_principal() {
    EndpointClient client = client();
    String scope = newScope();
    failedKey(inbox, scope, "k");
    String release = "/actuator/inbox/" + scope + "/k/release";
    String body = "{\"reason\":\"INC-7 provider confirmed the charge failed\"}";

    assertThat(client.get("/actuator/inbox/" + scope + "/k").status()).isEqualTo(200);
    assertThat(client.post(release, body).status()).isEqualTo(401);
    assertThat(client.post(release, body, "alice:wrong").status()).isEqualTo(401);
    assertThat(inbox.admin().find(scope, "k").orElseThrow().state()).isEqualTo(RecordState.FAILED);
    assertThat(inbox.admin().show(scope, "k").history()).isEmpty();

    EndpointClient.Response released = client.post(release, body, "alice:s3cret");

    assertThat(released.status()).as(released.toString()).isEqualTo(200);
    List<AuditEntry> history = inbox.admin().show(scope, "k").history();
    assertThat(history)
        .singleElement()
        .extracting(AuditEntry::action, AuditEntry::actor, AuditEntry::reason)
        .containsExactly("RELEASE", "alice", "INC-7 provider confirmed the charge failed");
  }

  /** What the README shows: reads of the endpoint open, writes for operators only. */
  @Configuration(proxyBeanMethods = false)
  static class ActuatorRules {
    @Bean
    SecurityFilterChain actuatorRules(HttpSecurity http) throws Exception {
      return http.securityMatcher("/actuator/**")
          .authorizeHttpRequests(
              requests ->
                  requests
                      .requestMatchers(HttpMethod.GET, "/actuator/inbox", "/actuator/inbox/**")
                      .permitAll()
                      .anyRequest()
                      .hasRole("OPS"))
          .httpBasic(Customizer.withDefaults())
          .csrf(csrf -> csrf.ignoringRequestMatchers("/actuator/**"))
          .build();
    }
  }
}
