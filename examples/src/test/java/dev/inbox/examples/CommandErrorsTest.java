package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.TestKafka;
import dev.inbox.testing.TestRabbit;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * A command that fails prints one line on stderr naming what failed, where, and what to do, exits
 * non-zero, and never prints a password; the stack trace comes only with {@code --verbose}.
 */
class CommandErrorsTest {
  private static final String SECRET = "s3cret-Pw-4711";

  /** What one in-process run of the command line printed, on every channel it could print to. */
  private record Run(int exit, String out, String err) {
    List<String> errLines() {
      return err.lines().filter(line -> !line.isBlank()).toList();
    }

    String everything() {
      return out + err;
    }
  }

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    PrintStream originalOut = System.out;
    PrintStream originalErr = System.err;
    ByteArrayOutputStream systemOut = new ByteArrayOutputStream();
    ByteArrayOutputStream systemErr = new ByteArrayOutputStream();
    int exit;
    try {
      System.setOut(new PrintStream(systemOut, true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(systemErr, true, StandardCharsets.UTF_8));
      CommandLine cli = InboxExamples.commandLine();
      cli.setOut(new PrintWriter(out, true));
      cli.setErr(new PrintWriter(err, true));
      exit = cli.execute(args);
    } finally {
      System.setOut(originalOut);
      System.setErr(originalErr);
    }
    Run run =
        new Run(
            exit,
            out + systemOut.toString(StandardCharsets.UTF_8),
            err + systemErr.toString(StandardCharsets.UTF_8));
    originalOut.println("exit " + run.exit() + ", stdout:\n" + run.out() + "stderr:\n" + run.err());
    return run;
  }

  private static int closedPort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"kafka-consumer", "rabbit-consumer", "http-server", "demo"})
  void an_unreachable_database_is_one_line_naming_it_without_the_password(String command)
      throws Exception {
    int port = closedPort();
    List<String> args =
        new ArrayList<>(
            List.of(
                command,
                "--jdbc-url",
                "jdbc:postgresql://127.0.0.1:" + port + "/payments?user=app&password=" + SECRET));
    if (command.equals("demo")) {
      args.addAll(
          List.of(
              "--bootstrap-servers",
              TestKafka.shared().bootstrapServers(),
              "--amqp-uri",
              TestRabbit.shared().uri()));
    }
    if (command.equals("http-server")) {
      args.addAll(List.of("--port", "0"));
    }
    Run run = run(args.toArray(String[]::new));
    assertThat(run.exit()).isNotZero().isNotEqualTo(2);
    assertThat(run.errLines()).as(run.err()).hasSize(1);
    assertThat(run.errLines().get(0))
        .startsWith(command + ": ")
        .contains("PostgreSQL")
        .contains("127.0.0.1:" + port)
        .contains("payments")
        .contains("--jdbc-url");
    assertThat(run.everything()).doesNotContain(SECRET).doesNotContain("\tat ");
  }

  @Test
  void verbose_adds_the_stack_trace_and_still_no_password() throws Exception {
    int port = closedPort();
    Run run =
        run(
            "kafka-consumer",
            "--verbose",
            "--jdbc-url",
            "jdbc:postgresql://127.0.0.1:" + port + "/payments?user=app&password=" + SECRET);
    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.errLines().get(0)).startsWith("kafka-consumer: ").contains("127.0.0.1:" + port);
    assertThat(run.err()).contains("\tat ").contains("Connection refused");
    assertThat(run.everything()).doesNotContain(SECRET);
  }

  @Test
  void a_mistyped_jdbc_url_is_never_echoed_with_its_password() {
    Run scheme =
        run("kafka-consumer", "--jdbc-url", "jdbc:postgres://db:5432/p?password=" + SECRET);
    assertThat(scheme.exit()).isEqualTo(2);
    assertThat(scheme.err()).contains("--jdbc-url").contains("password=***");
    Run port =
        run(
            "rabbit-consumer",
            "--jdbc-url",
            "jdbc:postgresql://127.0.0.1:54x32/p?user=app&password=" + SECRET);
    assertThat(port.exit()).isEqualTo(2);
    assertThat(port.errLines().get(0)).contains("--jdbc-url").contains("password=***");
    Run unknownOption =
        run("kafka-consumer", "--jdbc-ur", "jdbc:postgresql://db/p?password=" + SECRET);
    assertThat(unknownOption.exit()).isEqualTo(2);
    for (Run run : List.of(scheme, port, unknownOption)) {
      assertThat(run.everything()).doesNotContain(SECRET);
    }
  }

  @Test
  void an_unreachable_amqp_broker_is_one_line_without_the_password() throws Exception {
    int port = closedPort();
    Run run =
        run(
            "rabbit-producer",
            "--count",
            "1",
            "--amqp-uri",
            "amqp://payments:" + SECRET + "@127.0.0.1:" + port + "/%2F");
    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.errLines()).as(run.err()).hasSize(1);
    assertThat(run.errLines().get(0))
        .startsWith("rabbit-producer: ")
        .contains("127.0.0.1:" + port)
        .contains("--amqp-uri");
    assertThat(run.everything()).doesNotContain(SECRET);
    Run malformed = run("rabbit-producer", "--amqp-uri", "amqp://payments:" + SECRET + "@:x:y");
    assertThat(malformed.exit()).isEqualTo(2);
    assertThat(malformed.everything()).doesNotContain(SECRET);
  }

  @Test
  void every_subcommand_takes_verbose_and_help_shows_no_password() {
    for (String command :
        List.of(
            "demo",
            "http-server",
            "kafka-broker",
            "kafka-producer",
            "kafka-consumer",
            "rabbit-producer",
            "rabbit-consumer")) {
      Run help = run(command, "--help");
      assertThat(help.exit()).isZero();
      assertThat(help.out()).as(command).contains("--verbose");
      assertThat(help.out()).as(command).doesNotContain(":guest@");
    }
  }
}
