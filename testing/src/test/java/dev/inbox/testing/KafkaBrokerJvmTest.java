package dev.inbox.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The broker JVM does not outlive the JVM that started it, even one killed with kill -9. */
class KafkaBrokerJvmTest {

  /** A test JVM that starts the broker, says where, and waits to be killed. */
  public static final class StartsBroker {
    public static void main(String[] args) throws InterruptedException {
      System.out.println("bootstrap=" + KafkaBrokerJvm.start());
      Thread.sleep(Long.MAX_VALUE);
    }
  }

  @Test
  void the_broker_halts_and_deletes_its_directory_when_its_parent_is_killed() throws Exception {
    try (ChildJvm parent = ChildJvm.start(StartsBroker.class, List.of(), null, null)) {
      Await.until(
          "the child JVM to start its broker",
          Duration.ofMinutes(4),
          () -> parent.output().contains("bootstrap=") || !parent.isAlive());
      assertThat(parent.output()).contains("bootstrap=");
      List<ProcessHandle> brokers = parent.process().descendants().toList();
      assertThat(brokers).as("the broker JVM, the parent's one child").hasSize(1);
      ProcessHandle broker = brokers.get(0);
      // Its last argument (ProcessHandle.Info leaves out the arguments of a long command line).
      String[] arguments =
          Files.readString(Path.of("/proc", Long.toString(broker.pid()), "cmdline")).split("\0");
      Path directory = Path.of(arguments[arguments.length - 1]);
      assertThat(directory.resolve("server.properties")).exists();

      parent.kill9();

      Await.until("the broker JVM to halt", Duration.ofMinutes(1), () -> !broker.isAlive());
      assertThat(Files.exists(directory)).as("%s deleted", directory).isFalse();
    }
  }
}
