package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.PasswordPostgres;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo's and the fault suite's child processes log in to a database that demands a password,
 * and the password is never on their command line (which {@code ps} shows to every user) or in
 * their log.
 */
class ExampleProcessCredentialsTest {
  private static final String PASSWORD = "pay:W\\'\"# &%@=" + System.nanoTime();

  @Test
  void a_child_logs_in_with_the_password_of_its_jdbc_url_without_showing_it() throws Exception {
    try (PasswordPostgres server = PasswordPostgres.start()) {
      server.createRoleWithDatabase("payer", PASSWORD);
      String url =
          server.jdbcUrl("payer")
              + "?user=payer&password="
              + URLEncoder.encode(PASSWORD, StandardCharsets.UTF_8);
      int port = EmbeddedKafkaBroker.freePort();
      try (ExampleProcess child =
          ExampleProcess.start(
              "http-server", List.of("--port", Integer.toString(port), "--jdbc-url", url))) {
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest balance =
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/accounts/nobody"))
                .timeout(Duration.ofSeconds(10))
                .build();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        HttpResponse<String> answer = null;
        while (answer == null) {
          assertThat(child.isAlive()).as(Files.readString(child.log())).isTrue();
          assertThat(System.nanoTime()).as("the server's start").isLessThan(deadline);
          try {
            answer = client.send(balance, HttpResponse.BodyHandlers.ofString());
          } catch (java.io.IOException notYet) {
            Thread.sleep(200);
          }
        }
        // A 404 for an unknown account: the server read its accounts table, as user payer.
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(404);
        String commandLine =
            Files.readString(Path.of("/proc", Long.toString(child.pid()), "cmdline"))
                .replace('\0', ' ');
        assertThat(commandLine).contains("java").doesNotContain("pay:W").doesNotContain("pay%3AW");
        assertThat(Files.readString(child.log())).doesNotContain("pay:W").doesNotContain("pay%3AW");
      }
    }
  }
}
