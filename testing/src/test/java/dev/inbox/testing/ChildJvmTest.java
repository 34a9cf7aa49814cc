package dev.inbox.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A child JVM reaches a database that demands a password, as a Testcontainers PostgreSQL does, with
 * the password never on its command line or in its output.
 */
class ChildJvmTest {
  /** Characters that a pgpass line, a java argument file and a JDBC URL each have to escape. */
  private static final String PASSWORD = "p:w\\d'\"# &%@=x-" + System.nanoTime();

  private static PasswordPostgres server;

  @BeforeAll
  static void start() throws Exception {
    server = PasswordPostgres.start();
    server.createRoleWithDatabase("child_role", PASSWORD);
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @Test
  void the_server_refuses_the_role_without_its_password() {
    Properties userOnly = new Properties();
    userOnly.setProperty("user", "child_role");
    assertThatThrownBy(() -> DriverManager.getConnection(server.jdbcUrl("child_role"), userOnly))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("no password was provided");
  }

  @Test
  void a_child_gets_the_database_password_but_not_on_its_command_line() throws Exception {
    String url = server.jdbcUrl("child_role");
    try (ChildJvm child =
        ChildJvm.start(DatabaseProbe.class, List.of(url, "child_role"), "child_role", PASSWORD)) {
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (!child.output().contains("connected as") && child.isAlive()) {
        assertThat(System.nanoTime()).as("the child's connection").isLessThan(deadline);
        Thread.sleep(100);
      }
      assertThat(child.output()).contains("connected as child_role");
      String commandLine =
          Files.readString(Path.of("/proc", Long.toString(child.pid()), "cmdline"))
              .replace('\0', ' ');
      assertThat(commandLine).contains("java").doesNotContain(PASSWORD).doesNotContain("p:w");
      assertThat(child.output()).doesNotContain(PASSWORD);
      assertThat(new String(Files.readAllBytes(child.logFile().toPath()), StandardCharsets.UTF_8))
          .doesNotContain(PASSWORD);
    }
  }
}
