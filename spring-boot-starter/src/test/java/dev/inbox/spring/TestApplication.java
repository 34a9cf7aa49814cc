package dev.inbox.spring;

import dev.inbox.testing.TestDatabase;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The application the starter's tests boot: only auto-configuration, on the test database. It scans
 * no components: each test names the beans it adds, so that one test's listeners never run in
 * another's context.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestApplication {

  /**
   * Starts this application without a web server on this JVM's test database, without the
   * listeners' inbox and JPA's DDL, with these properties too; for tests that start their own.
   */
  public static ConfigurableApplicationContext start(String... properties) {
    TestDatabase db = TestDatabase.shared();
    return new SpringApplicationBuilder(TestApplication.class)
        .web(WebApplicationType.NONE)
        .properties(
            "spring.datasource.url=" + db.jdbcUrl(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + db.password(),
            "spring.jpa.hibernate.ddl-auto=none",
            "inbox.listeners.enabled=false")
        .properties(properties)
        .run();
  }

  /** Points Spring's DataSource at this JVM's test database. */
  public static void database(DynamicPropertyRegistry registry) {
    TestDatabase db = TestDatabase.shared();
    registry.add("spring.datasource.url", db::jdbcUrl);
    registry.add("spring.datasource.username", db::user);
    registry.add("spring.datasource.password", db::password);
  }
}
