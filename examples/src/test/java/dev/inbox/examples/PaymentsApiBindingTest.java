package dev.inbox.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.testing.TestDataSources;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The example API listens on loopback unless {@code --host} says otherwise, and the well-known key
 * {@code demo-key} never opens it to other machines.
 */
class PaymentsApiBindingTest {

  @Test
  void the_api_listens_on_loopback_only_by_default() throws Exception {
    InetAddress external = nonLoopbackAddress();
    assumeTrue(external != null, "this machine has no non-loopback IPv4 address");
    try (HikariDataSource dataSource = TestDataSources.pool(2)) {
      InboxSettings settings =
          InboxSettings.builder()
              .schema(TestDataSources.newSchema("bind"))
              .janitorInterval(Duration.ZERO)
              .build();
      PaymentsDatabase.migrate(dataSource, settings);
      try (Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).build();
          PaymentsApi api = PaymentsApi.start(0, dataSource, inbox, Map.of("k", "t"))) {
        int port = URI.create(api.baseUri()).getPort();
        try (Socket loopback = new Socket()) {
          loopback.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
        }
        assertThatThrownBy(
                () -> {
                  try (Socket outside = new Socket()) {
                    outside.connect(new InetSocketAddress(external, port), 5_000);
                  }
                })
            .as("a connection to %s:%d", external.getHostAddress(), port)
            .isInstanceOf(java.net.ConnectException.class);
      }
    }
  }

  @Test
  void the_demo_key_is_refused_on_a_host_other_machines_can_reach() {
    StringWriter err = new StringWriter();
    CommandLine cli = InboxExamples.commandLine();
    cli.setErr(new PrintWriter(err));
    assertThat(cli.execute("http-server", "--host", "0.0.0.0", "--port", "0")).isEqualTo(2);
    assertThat(err.toString())
        .contains("--host 0.0.0.0")
        .contains("demo-key")
        .contains("--api-key");
    err.getBuffer().setLength(0);
    assertThat(
            cli.execute(
                "http-server", "--host", "0.0.0.0", "--port", "0", "--api-key", "demo-key=demo"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("demo-key");
    err.getBuffer().setLength(0);
    assertThat(cli.execute("http-server", "--host", "no such host!", "--port", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("--host");
  }

  private static InetAddress nonLoopbackAddress() throws Exception {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (InetAddress address : Collections.list(nic.getInetAddresses())) {
        if (address instanceof Inet4Address && !address.isLoopbackAddress()) {
          return address;
        }
      }
    }
    return null;
  }
}
