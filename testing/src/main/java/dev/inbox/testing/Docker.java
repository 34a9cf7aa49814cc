package dev.inbox.testing;

import org.testcontainers.DockerClientFactory;

/** Whether Testcontainers can run containers here; asked once per JVM. */
public final class Docker {
  private static volatile Boolean available;

  private Docker() {}

  public static boolean isAvailable() {
    Boolean answer = available;
    if (answer == null) {
      synchronized (Docker.class) {
        answer = available;
        if (answer == null) {
          try {
            answer = DockerClientFactory.instance().isDockerAvailable();
          } catch (RuntimeException | LinkageError e) {
            answer = false;
          }
          available = answer;
        }
      }
    }
    return answer;
  }
}
