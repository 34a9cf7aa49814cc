package dev.inbox.spring.actuate;

import dev.inbox.Inbox;
import dev.inbox.spring.TestApplication;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What each endpoint test has: the test database, the inbox, and a client of the running server.
 */
abstract class ServerTest {

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
  }

  @Autowired Inbox inbox;

  @Value("${local.server.port}")
  int port;

  EndpointClient client() {
    return new EndpointClient(port);
  }
}
