package dev.inbox.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One subcommand of this jar run as a child process, so that the demo can kill it with SIGKILL
 * (kill -9) and start it again. Its output goes to a log file.
 */
final class ExampleProcess implements AutoCloseable {
  private final List<String> command;
  private final Path log;
  private Process process;

  private ExampleProcess(List<String> command, Path log) {
    this.command = command;
    this.log = log;
  }

  static ExampleProcess start(String subcommand, List<String> args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx256m");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(InboxExamples.class.getName());
    command.add(subcommand);
    command.addAll(args);
    ExampleProcess child =
        new ExampleProcess(command, Files.createTempFile("inbox-demo-" + subcommand + "-", ".log"));
    child.restart();
    return child;
  }

  /** Starts the process (again), appending to the same log. */
  synchronized void restart() throws IOException {
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
  }

  /** SIGKILL: no shutdown hook runs, nothing is committed or acknowledged on the way out. */
  synchronized void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /**
   * {@link #kill9} and {@link #restart} under one lock, so that a supervisor calling {@link
   * #restartIfExited} in between cannot take the kill for an exit of its own and start a second
   * process beside the one started here.
   */
  synchronized void kill9AndRestart() throws InterruptedException, IOException {
    kill9();
    restart();
  }

  /**
   * Starts the process again if it exited on its own, as a supervisor (systemd, Kubernetes) would.
   * Returns its exit code then, else null.
   */
  synchronized Integer restartIfExited() throws IOException {
    if (process.isAlive()) {
      return null;
    }
    int exitCode = process.exitValue();
    restart();
    return exitCode;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** The subcommand it runs. */
  String name() {
    return command.get(command.indexOf(InboxExamples.class.getName()) + 1);
  }

  Path log() {
    return log;
  }

  /** SIGTERM, for a clean shutdown; SIGKILL if it does not exit within 30 seconds. */
  @Override
  public synchronized void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        kill9();
      }
    }
  }
}
