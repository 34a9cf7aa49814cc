package dev.inbox.examples;

import dev.inbox.InboxSettings;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Serves the payments API until stopped. */
@Command(
    name = "http-server",
    mixinStandardHelpOptions = true,
    description = {
      "Serve the payments API: POST /payments (headers Idempotency-Key and X-Api-Key,",
      "body {\"account\":\"acc-1\",\"amountCents\":100}) and GET /accounts/{id}."
    })
final class HttpServerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--host",
      defaultValue = PaymentsApi.LOOPBACK,
      description =
          "Address to listen on; anything but a loopback address needs your own --api-key, since"
              + " demo-key is accepted on loopback only (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(
      names = "--port",
      defaultValue = "8080",
      description = "Port (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--jdbc-url",
      defaultValue = ConsumerDatabase.LOCAL_URL,
      description = "PostgreSQL JDBC URL (default: ${DEFAULT-VALUE}).")
  String jdbcUrl;

  @Option(
      names = "--api-key",
      paramLabel = "KEY=TENANT",
      defaultValue = "demo-key=demo",
      description =
          "An API key and its tenant, the inbox scope; repeatable (default: ${DEFAULT-VALUE}).")
  List<String> apiKeys;

  @Option(
      names = "--in-flight-wait-ms",
      defaultValue = "5000",
      description =
          "How long a retry waits for the first request with its key before it gets 409; the"
              + " inbox's lock timeout gets it too (default: ${DEFAULT-VALUE}).")
  long inFlightWaitMs;

  @Option(
      names = "--payment-delay-ms",
      defaultValue = "0",
      description =
          "Hold each new payment's transaction open this long, to watch a concurrent retry get"
              + " 409 (default: ${DEFAULT-VALUE}).")
  long paymentDelayMs;

  @Override
  public Integer call() throws Exception {
    Validate.port(spec, "--port", port);
    Validate.jdbcUrl(spec, "--jdbc-url", jdbcUrl);
    Validate.positive(spec, "--in-flight-wait-ms", inFlightWaitMs);
    Validate.notNegative(spec, "--payment-delay-ms", paymentDelayMs);
    Map<String, String> tenants = new LinkedHashMap<>();
    for (String mapping : apiKeys) {
      int eq = mapping.indexOf('=');
      if (eq <= 0 || eq == mapping.length() - 1) {
        throw new ParameterException(
            spec.commandLine(), "--api-key must look like KEY=TENANT, but was '" + mapping + "'");
      }
      tenants.put(mapping.substring(0, eq), mapping.substring(eq + 1));
    }
    if (!isLoopback(host) && tenants.containsKey(DemoCommand.API_KEY)) {
      throw new ParameterException(
          spec.commandLine(),
          "--host "
              + host
              + " lets other machines reach the API, and the well-known key '"
              + DemoCommand.API_KEY
              + "' would let any of them pay; give your own --api-key KEY=TENANT ('"
              + DemoCommand.API_KEY
              + "' is accepted on a loopback host only, such as the default "
              + PaymentsApi.LOOPBACK
              + ")");
    }
    Duration inFlightWait = Duration.ofMillis(inFlightWaitMs);
    InboxSettings settings = InboxSettings.builder().lockTimeout(inFlightWait).build();
    try (ConsumerDatabase db = new ConsumerDatabase(jdbcUrl, 16, settings);
        PaymentsApi api = listen(db, tenants, inFlightWait)) {
      System.out.println("payments API on " + api.baseUri() + " for tenants " + tenants.values());
      api.join();
    }
    return 0;
  }

  private PaymentsApi listen(
      ConsumerDatabase db, Map<String, String> tenants, Duration inFlightWait) throws Exception {
    try {
      return PaymentsApi.start(
          host,
          port,
          db.dataSource,
          db.inbox,
          tenants,
          inFlightWait,
          Duration.ofMillis(paymentDelayMs));
    } catch (IOException e) {
      throw new ExampleFailure(
          "cannot listen on "
              + host
              + ":"
              + port
              + " (--host, --port): "
              + CommandErrors.rootCause(e).getMessage()
              + "; stop what uses the port, or choose another --port",
          e);
    }
  }

  private boolean isLoopback(String host) {
    try {
      for (InetAddress address : InetAddress.getAllByName(host)) {
        if (!address.isLoopbackAddress()) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException e) {
      throw new ParameterException(
          spec.commandLine(),
          "--host must be an address or a name of this machine, but '"
              + host
              + "' does not resolve");
    }
  }
}
