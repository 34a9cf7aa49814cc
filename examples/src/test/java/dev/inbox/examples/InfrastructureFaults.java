package dev.inbox.examples;

import dev.inbox.testing.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Faults injected from outside the processes under test: in PostgreSQL and in RabbitMQ. */
final class InfrastructureFaults {
  private InfrastructureFaults() {}

  /**
   * Terminates every backend connected to the database, from a connection to another database, so
   * that whatever transaction each was in is rolled back. Returns how many were terminated.
   */
  static int terminateBackends(String database) throws Exception {
    try (Connection c = TestDatabase.shared().connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE datname = ? AND pid <> pg_backend_pid()")) {
      ps.setString(1, database);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Whether the tests' PostgreSQL is this machine's cluster, which pg_ctlcluster can restart. */
  static boolean canRestartPostgres() {
    String url = TestDatabase.shared().jdbcUrl();
    return (url.contains("//127.0.0.1:5432/") || url.contains("//localhost:5432/"))
        && Files.isExecutable(Path.of("/usr/bin/pg_ctlcluster"))
        && Files.isDirectory(Path.of("/etc/postgresql"));
  }

  /** Restarts the local cluster (fast shutdown: every session is cut off) and waits until up. */
  static void restartPostgres() throws Exception {
    String version;
    try (var versions = Files.list(Path.of("/etc/postgresql"))) {
      version = versions.findFirst().orElseThrow().getFileName().toString();
    }
    run("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart", "-m", "fast");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (Connection c = TestDatabase.shared().connect()) {
        return;
      } catch (Exception e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("PostgreSQL did not come back within 60 s", e);
        }
        Thread.sleep(200);
      }
    }
  }

  /**
   * Force-closes every RabbitMQ connection whose client-provided name is {@code connectionName}.
   * Returns how many were closed.
   */
  static int closeRabbitConnections(String connectionName) throws Exception {
    String listed =
        run("rabbitmqctl", "-q", "list_connections", "pid", "client_properties").output();
    List<String> pids = new ArrayList<>();
    for (String line : listed.split("\n")) {
      if (line.contains(connectionName) && line.indexOf('\t') > 0) {
        pids.add(line.substring(0, line.indexOf('\t')).trim());
      }
    }
    for (String pid : pids) {
      run("rabbitmqctl", "close_connection", pid, "closed by the fault suite");
    }
    return pids.size();
  }

  private record Result(String output) {}

  private static Result run(String... command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(90, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
    }
    return new Result(output);
  }
}
