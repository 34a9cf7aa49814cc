package dev.inbox.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One subcommand of this jar run as a child process, so that the demo can kill it with SIGKILL
 * (kill -9) and start it again. Its output goes to a log file.
 *
 * <p>The arguments, a {@code --jdbc-url} with its password or an {@code --amqp-uri} with its user
 * info among them, reach the child through a java argument file ({@code java @file}) that only its
 * owner can read and that is deleted when the child is closed: a command line is visible to every
 * user of the machine in {@code ps}.
 */
final class ExampleProcess implements AutoCloseable {
  private static final FileAttribute<?> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

  private final String subcommand;
  private final List<String> command;
  private final Path argFile;
  private final Path log;
  private Process process;

  private ExampleProcess(String subcommand, List<String> command, Path argFile, Path log) {
    this.subcommand = subcommand;
    this.command = command;
    this.argFile = argFile;
    this.log = log;
  }

  static ExampleProcess start(String subcommand, List<String> args) throws IOException {
    List<String> javaArgs = new ArrayList<>();
    javaArgs.add("-Xmx256m");
    javaArgs.add("-cp");
    javaArgs.add(System.getProperty("java.class.path"));
    javaArgs.add(InboxExamples.class.getName());
    javaArgs.add(subcommand);
    javaArgs.addAll(args);
    Path argFile = Files.createTempFile("inbox-demo-" + subcommand + "-args-", "", OWNER_ONLY);
    argFile.toFile().deleteOnExit();
    Files.writeString(argFile, javaArgumentFile(javaArgs));
    List<String> command =
        List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "@" + argFile);
    ExampleProcess child =
        new ExampleProcess(
            subcommand,
            command,
            argFile,
            Files.createTempFile("inbox-demo-" + subcommand + "-", ".log"));
    child.restart();
    return child;
  }

  /** The java launcher's argument file: one double-quoted argument a line, with escapes. */
  private static String javaArgumentFile(List<String> args) {
    StringBuilder file = new StringBuilder();
    for (String arg : args) {
      file.append('"')
          .append(
              arg.replace("\\", "\\\\")
                  .replace("\"", "\\\"")
                  .replace("\n", "\\n")
                  .replace("\r", "\\r")
                  .replace("\t", "\\t"))
          .append("\"\n");
    }
    return file.toString();
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
    return subcommand;
  }

  long pid() {
    return process.pid();
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
    try {
      Files.deleteIfExists(argFile);
    } catch (IOException e) {
      // deleteOnExit removes it at the latest.
    }
  }
}
