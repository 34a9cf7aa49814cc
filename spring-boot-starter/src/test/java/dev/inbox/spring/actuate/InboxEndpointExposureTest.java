package dev.inbox.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.spring.TestApplication;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;

/**
 * Without {@code management.endpoints.web.exposure.include}, {@code /actuator/inbox} is not there.
 */
@SpringBootTest(
    classes = {TestApplication.class, OpenSecurity.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "inbox.schema=boot_actuator")
class InboxEndpointExposureTest extends ServerTest {

  @Autowired ApplicationContext context;

  @Test
  void the_endpoint_is_not_exposed_over_http_by_default() {
    EndpointClient client = client();

    assertThat(client.get("/actuator").body()).contains("health").doesNotContain("inbox");
    assertThat(client.get("/actuator/inbox").status()).isEqualTo(404);
    assertThat(client.post("/actuator/inbox/s/k/release", "{\"reason\":\"x\"}").status())
        .isEqualTo(404);
    assertThat(context.getBeanNamesForType(InboxEndpoint.class)).isEmpty();
  }
}
