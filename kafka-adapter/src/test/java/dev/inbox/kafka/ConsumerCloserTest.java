package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.Test;

/**
 * The build runs the adapter on kafka-clients 4.1 (the default) and 3.9 (-Pboot-3.5); {@code
 * LoopFailureTest} proves on each that a static member that stopped on a failure leaves its group.
 * This pins down which of the closer's two ways that proof went through.
 */
class ConsumerCloserTest {

  @Test
  void closesWithCloseOptionsExactlyOnKafkaClients41AndLater() {
    String[] version = AppInfoParser.getVersion().split("\\.");
    int major = Integer.parseInt(version[0]);
    int minor = Integer.parseInt(version[1]);
    boolean atLeast41 = major > 4 || (major == 4 && minor >= 1);
    assertThat(ConsumerCloser.closesWithCloseOptions())
        .as("CloseOptions found on kafka-clients %s", AppInfoParser.getVersion())
        .isEqualTo(atLeast41);
  }
}
