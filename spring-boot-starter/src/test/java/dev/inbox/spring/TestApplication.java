package dev.inbox.spring;

import dev.inbox.testing.TestDatabase;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The application the starter's tests boot: only auto-configuration, on the test database. It scans
 * no components: each test names the beans it adds, so that one test's listeners never run in
 * another's context.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestApplication {

  /** Points Spring's DataSource at this JVM's test database. */
  public static void database(DynamicPropertyRegistry registry) {
    TestDatabase db = TestDatabase.shared();
    registry.add("spring.datasource.url", db::jdbcUrl);
    registry.add("spring.datasource.username", db::user);
    registry.add("spring.datasource.password", db::password);
  }
}
