package dev.inbox.testing.broker;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import kafka.Kafka;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;

/**
 * The main class of the tests' broker JVM: formats the data directory named in {@code
 * server.properties} as {@code kafka-storage format} does, then runs the broker as {@code
 * kafka-server-start} does. It lives as long as its standard input: when the JVM that started it
 * closes that pipe, or dies, it deletes its directory and halts at once.
 *
 * <p>Arguments: the {@code server.properties} file, and the directory to delete on exit.
 */
public final class KafkaBrokerProcess {
  private KafkaBrokerProcess() {}

  public static void main(String[] args) {
    Path config = Path.of(args[0]);
    Path directory = Path.of(args[1]);
    Thread watch = new Thread(() -> haltWhenStdinCloses(directory), "stdin-watch");
    watch.setDaemon(true);
    watch.start();
    format(config);
    Kafka.main(new String[] {config.toString()});
  }

  private static void format(Path config) {
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    int code;
    try (PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8)) {
      code =
          StorageTool.execute(
              new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()},
              out);
    }
    System.out.print(output.toString(StandardCharsets.UTF_8));
    if (code != 0) {
      System.out.println("kafka-storage format failed with exit code " + code);
      Runtime.getRuntime().halt(code);
    }
  }

  private static void haltWhenStdinCloses(Path directory) {
    try {
      while (System.in.read() >= 0) {
        // Nothing is ever sent; only the end of the stream matters.
      }
    } catch (IOException e) {
      // A broken pipe means the same: the parent is gone.
    }
    // Halt, not exit: the broker's orderly shutdown could take long, and nobody waits for it.
    try {
      deleteRecursively(directory);
    } finally {
      Runtime.getRuntime().halt(0);
    }
  }

  private static void deleteRecursively(Path directory) {
    try (Stream<Path> files = Files.walk(directory)) {
      files.sorted(Comparator.reverseOrder()).forEach(KafkaBrokerProcess::deleteQuietly);
    } catch (IOException | UncheckedIOException e) {
      // The broker may be writing while we delete; what is left stays in the temporary directory.
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // As above.
    }
  }
}
