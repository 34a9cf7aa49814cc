package dev.inbox.examples.spring;

import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * The service's Flyway and the inbox share one schema ({@code spring_payments}): on a fresh
 * database Boot's Flyway must migrate it before the inbox creates its table there, or Flyway
 * refuses the schema ("Found non-empty schema(s) ... but no schema history table"). The starter's
 * {@code InboxMigration} is a database initializer that Boot orders after Flyway; this test starts
 * the service on a fresh schema with {@code spring.flyway.baseline-on-migrate=false}.
 */
class StarterFlywayOrderTest {

  @Test
  void the_service_starts_on_a_fresh_schema_without_baseline_on_migrate() {
    String schema = "fresh_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    List<String> args = new ArrayList<>();
    TestServices.properties("flyway-order-" + schema)
        .forEach((key, value) -> args.add("--" + key + "=" + value));
    if (TestServices.databasePassword() != null) {
      args.add("--spring.datasource.password=" + TestServices.databasePassword());
    }
    args.addAll(
        List.of(
            "--server.port=0",
            "--spring.flyway.baseline-on-migrate=false",
            "--spring.flyway.default-schema=" + schema,
            "--spring.datasource.hikari.schema=" + schema,
            "--inbox.schema=" + schema));
    assertThatCode(
            () ->
                new SpringApplicationBuilder(PaymentsServiceApplication.class)
                    .run(args.toArray(String[]::new))
                    .close())
        .doesNotThrowAnyException();
  }
}
