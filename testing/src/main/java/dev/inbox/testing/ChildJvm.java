package dev.inbox.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Java process started from the test JVM's own class path, so that a test can kill a consumer
 * with {@code kill -9} ({@link #kill9()}) in the middle of its work. Its output goes to a log file.
 *
 * <p>The child can reach the tests' database as the test JVM does, password included, without the
 * password ever being on a command line that {@code ps} shows: the password goes into a pgpass file
 * of the child's own (named by {@code PGPASSFILE}, which pgjdbc reads for a connection that names
 * no password), and the arguments into a java argument file ({@code java @file}); both are readable
 * by their owner only and deleted when the child is closed.
 */
public final class ChildJvm implements AutoCloseable {
  private static final FileAttribute<?> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

  private final Process process;
  private final Path log;
  private final List<Path> secrets;

  private ChildJvm(Process process, Path log, List<Path> secrets) {
    this.process = process;
    this.log = log;
    this.secrets = secrets;
  }

  /**
   * Starts {@code mainClass} with the arguments, the test class path and a 256 MiB heap, able to
   * log in to this JVM's {@link TestDatabase} with its user and password.
   */
  public static ChildJvm start(Class<?> mainClass, List<String> args) throws IOException {
    TestDatabase db = TestDatabase.shared();
    return start(mainClass, args, db.user(), db.password());
  }

  /**
   * Starts {@code mainClass} able to log in to PostgreSQL as {@code databaseUser} (null: whatever
   * user it connects as) with {@code databasePassword} (null: none) on any server.
   */
  public static ChildJvm start(
      Class<?> mainClass, List<String> args, String databaseUser, String databasePassword)
      throws IOException {
    List<Path> secrets = new ArrayList<>();
    Path log = Files.createTempFile("child-" + mainClass.getSimpleName() + "-", ".log");
    try {
      List<String> javaArgs = new ArrayList<>();
      javaArgs.add("-Xmx256m");
      javaArgs.add("-cp");
      javaArgs.add(System.getProperty("java.class.path"));
      javaArgs.add(mainClass.getName());
      javaArgs.addAll(args);
      Path argFile = ownerOnlyFile("child-args-", secrets);
      Files.writeString(argFile, javaArgumentFile(javaArgs));
      ProcessBuilder builder =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(), "@" + argFile)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      if (databasePassword != null) {
        Path pgpass = ownerOnlyFile("child-pgpass-", secrets);
        Files.writeString(
            pgpass,
            "*:*:*:"
                + (databaseUser == null ? "*" : pgpassField(databaseUser))
                + ":"
                + pgpassField(databasePassword)
                + "\n");
        builder.environment().put("PGPASSFILE", pgpass.toString());
      }
      return new ChildJvm(builder.start(), log, secrets);
    } catch (IOException | RuntimeException e) {
      deleteAll(secrets);
      throw e;
    }
  }

  private static Path ownerOnlyFile(String prefix, List<Path> secrets) throws IOException {
    Path file = Files.createTempFile(prefix, "", OWNER_ONLY);
    secrets.add(file);
    file.toFile().deleteOnExit();
    return file;
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

  /** A pgpass field: ':' and '\' are escaped with a backslash. */
  private static String pgpassField(String value) {
    return value.replace("\\", "\\\\").replace(":", "\\:");
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
    deleteAll(secrets);
  }

  private static void deleteAll(List<Path> files) {
    for (Path file : files) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        // deleteOnExit removes it at the latest.
      }
    }
  }
}
