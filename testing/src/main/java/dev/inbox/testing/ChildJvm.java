package dev.inbox.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Java process started from the test JVM's own class path, so that a test can kill a consumer
 * with {@code kill -9} ({@link #kill9()}) in the middle of its work. Its output goes to a log file.
 */
public final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final Path log;

  private ChildJvm(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** Starts {@code mainClass} with the arguments, the test class path and a 256 MiB heap. */
  public static ChildJvm start(Class<?> mainClass, List<String> args) throws IOException {
    Path log = Files.createTempFile("child-" + mainClass.getSimpleName() + "-", ".log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx256m");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass.getName());
    command.addAll(args);
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    return new ChildJvm(process, log);
  }

  /** Sends SIGKILL: the process gets no chance to commit, ack or clean up. */
  public void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  public Process process() {
    return process;
  }

  /** Everything the child printed so far. */
  public String output() throws IOException {
    return Files.readString(log);
  }

  public File logFile() {
    return log.toFile();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill9();
    }
  }
}
