package dev.inbox.examples;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inbox.Inbox;
import dev.inbox.http.IdempotencyFilter;
import dev.inbox.http.IdempotentRequests;
import dev.inbox.http.ScopeResolver;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.NetworkConnector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The payments API on Jetty: {@code POST /payments} behind the Idempotency-Key filter, whose {@code
 * X-Api-Key} names the tenant (the inbox scope), and {@code GET /accounts/{id}}.
 */
final class PaymentsApi implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Server server;

  private PaymentsApi(Server server) {
    this.server = server;
  }

  /** The address the API listens on unless told otherwise: this machine only. */
  static final String LOOPBACK = "127.0.0.1";

  /**
   * On {@link #LOOPBACK}.
   *
   * @param port 0 for any free port
   * @param tenantsByApiKey which tenant each API key belongs to
   */
  static PaymentsApi start(
      int port, DataSource dataSource, Inbox inbox, Map<String, String> tenantsByApiKey)
      throws Exception {
    return start(
        LOOPBACK,
        port,
        dataSource,
        inbox,
        tenantsByApiKey,
        IdempotencyFilter.DEFAULT_IN_FLIGHT_WAIT,
        Duration.ZERO);
  }

  /**
   * @param host the address to listen on
   * @param inFlightWait how long a retry polls for the first request with its key before it gets
   *     409
   * @param paymentDelay how long each new payment holds its transaction open, so that a concurrent
   *     retry can be watched getting 409
   */
  static PaymentsApi start(
      String host,
      int port,
      DataSource dataSource,
      Inbox inbox,
      Map<String, String> tenantsByApiKey,
      Duration inFlightWait,
      Duration paymentDelay)
      throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(host);
    connector.setPort(port);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    IdempotencyFilter filter =
        IdempotencyFilter.builder(inbox)
            .scopeResolver(ScopeResolver.header("X-Api-Key", tenantsByApiKey::get))
            .paths(path -> path.equals("/payments"))
            .inFlightWait(inFlightWait)
            .build();
    context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new PaymentsServlet(paymentDelay)), "/payments");
    context.addServlet(new ServletHolder(new AccountsServlet(dataSource)), "/accounts/*");
    server.setHandler(context);
    server.start();
    return new PaymentsApi(server);
  }

  /** Where a client on this machine reaches the API. */
  String baseUri() {
    NetworkConnector connector = (NetworkConnector) server.getConnectors()[0];
    String host;
    try {
      InetAddress address = InetAddress.getByName(connector.getHost());
      host =
          address.isAnyLocalAddress()
              ? LOOPBACK
              : address instanceof Inet6Address
                  ? "[" + address.getHostAddress() + "]"
                  : address.getHostAddress();
    } catch (UnknownHostException e) {
      throw new IllegalStateException("the API listens on a host that does not resolve", e);
    }
    return "http://" + host + ":" + connector.getLocalPort();
  }

  void join() throws InterruptedException {
    server.join();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }

  private static void json(HttpServletResponse response, int status, Object body)
      throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    response.setStatus(status);
    response.setContentType("application/json");
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  private static void problem(HttpServletResponse response, int status, String detail)
      throws IOException {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "about:blank").put("status", status).put("detail", detail);
    byte[] bytes = JSON.writeValueAsBytes(body);
    response.setStatus(status);
    response.setContentType("application/problem+json");
    response.getOutputStream().write(bytes);
  }

  /** Applies a payment through the filter's transaction; the key is the payment id. */
  private static final class PaymentsServlet extends HttpServlet {
    private final Duration delay;

    PaymentsServlet(Duration delay) {
      this.delay = delay;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      Payment payment;
      try {
        // The filter's key, not the raw header: the inbox records the payment under exactly it.
        payment =
            Payment.fromJson(
                request.getInputStream().readAllBytes(),
                IdempotentRequests.key(request).orElse(null));
      } catch (IllegalArgumentException e) {
        problem(response, 400, e.getMessage());
        return;
      }
      long balance;
      try {
        balance = PaymentsDatabase.apply(IdempotentRequests.connection(request), payment, "http");
        Thread.sleep(delay.toMillis());
      } catch (SQLException e) {
        throw new IOException("the payment could not be written", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while holding the payment", e);
      }
      ObjectNode body = JSON.createObjectNode();
      body.put("paymentId", payment.paymentId())
          .put("account", payment.account())
          .put("balanceCents", balance);
      response.setHeader("Location", "/payments/" + payment.paymentId());
      json(response, 201, body);
    }
  }

  /** {@code GET /accounts/{id}}: the balance. */
  private static final class AccountsServlet extends HttpServlet {
    private final DataSource dataSource;

    AccountsServlet(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      String account = request.getPathInfo() == null ? "" : request.getPathInfo().substring(1);
      Long balance;
      try {
        balance = PaymentsDatabase.balance(dataSource, account);
      } catch (SQLException e) {
        throw new IOException("the balance could not be read", e);
      }
      if (balance == null) {
        problem(response, 404, "no account '" + account + "'");
        return;
      }
      ObjectNode body = JSON.createObjectNode();
      body.put("account", account).put("balanceCents", balance);
      json(response, 200, body);
    }
  }
}
