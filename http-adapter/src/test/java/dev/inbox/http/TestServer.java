package dev.inbox.http;

import dev.inbox.Inbox;
import dev.inbox.testing.EffectsTable;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Jetty 12 with the filter in front of a payments servlet. Each run of the servlet is
 * counted; {@code POST /payments} (or {@code /payments/charge}) writes one effect row through the
 * request's inbox transaction (or, in leased mode, through a connection of its own) and answers
 * 201.
 *
 * <ul>
 *   <li>{@code ?fail=500}, or the header {@code X-Fail: 500} (not in the fingerprint, so that a
 *       retry is the same request): writes, then answers 500
 *   <li>{@code ?fail=throw}, or the header {@code X-Fail: throw}: writes, then throws
 *   <li>{@code X-Fail: error}: writes, then throws a {@link StackOverflowError}
 *   <li>{@code ?fail=serialization}: writes, then PostgreSQL raises a serialization failure (40001)
 *       in the inbox transaction, which the servlet throws on
 *   <li>{@code X-Fail: swallow}: writes, then catches an SQL error without a savepoint, which
 *       leaves the inbox transaction aborted, and answers 201
 *   <li>{@code ?fail=commit}: writes, then tries to commit the inbox transaction itself
 *   <li>{@code ?redirect=N}: writes, then answers N with a {@code Location} (302 through {@code
 *       sendRedirect})
 *   <li>{@code ?reject=N}: writes nothing and answers N (a client error)
 *   <li>{@code ?big=N}: answers a body of N bytes
 *   <li>{@code ?sleepMs=N}: writes, then sleeps before failing or answering
 *   <li>{@code ?gate=1}: writes, then waits (up to a minute) until the test opens {@link #gate}
 *   <li>{@code ?close=1}: closes the inbox connection first, as a try-with-resources would
 * </ul>
 *
 * The amount is the plain-text body, or the {@code amount} parameter of a form. The answer is
 * written through the response's writer, with a non-ASCII character, so that replays show the
 * charset survives.
 */
final class TestServer implements AutoCloseable {
  static final Map<String, String> TENANTS = Map.of("key-a", "tenant-a", "key-b", "tenant-b");

  final AtomicInteger runs = new AtomicInteger();

  /** Holds {@code ?gate=1} requests after their write until a test counts it down. */
  final CountDownLatch gate = new CountDownLatch(1);

  private final Server server;
  private final DataSource dataSource;
  private final EffectsTable effects;

  TestServer(Inbox inbox, DataSource dataSource, EffectsTable effects, int port) throws Exception {
    this(inbox, dataSource, effects, port, builder -> builder);
  }

  TestServer(
      Inbox inbox,
      DataSource dataSource,
      EffectsTable effects,
      int port,
      UnaryOperator<IdempotencyFilter.Builder> customize)
      throws Exception {
    this(inbox, dataSource, effects, port, customize, UriCompliance.DEFAULT, false);
  }

  /**
   * A server whose connector accepts the URIs that {@code compliance} allows: Jetty's default
   * refuses ambiguous ones (encoded dot segments and separators, empty segments) itself. With
   * {@code decodeAmbiguousUris}, the servlet API hands such paths over decoded but not normalised
   * instead of throwing.
   */
  TestServer(
      Inbox inbox,
      DataSource dataSource,
      EffectsTable effects,
      int port,
      UnaryOperator<IdempotencyFilter.Builder> customize,
      UriCompliance compliance,
      boolean decodeAmbiguousUris)
      throws Exception {
    this.dataSource = dataSource;
    this.effects = effects;
    IdempotencyFilter.Builder builder =
        IdempotencyFilter.builder(inbox)
            .scopeResolver(ScopeResolver.header("X-Api-Key", TENANTS))
            .pathPrefixes("/payments")
            .inFlightWait(Duration.ofSeconds(10))
            .maxStoredBody(64 * 1024);
    IdempotencyFilter filter = customize.apply(builder).build();
    server = new Server();
    HttpConfiguration http = new HttpConfiguration();
    http.setUriCompliance(compliance);
    ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
    connector.setPort(port);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    FilterHolder filterHolder = new FilterHolder(filter);
    filterHolder.setAsyncSupported(true); // as Spring Boot registers its filters
    context.addFilter(filterHolder, "/*", EnumSet.of(DispatcherType.REQUEST));
    ServletHolder payments = new ServletHolder(new PaymentServlet());
    context.addServlet(payments, "/payments");
    context.addServlet(payments, "/payments/charge");
    ServletHolder async = new ServletHolder(new AsyncPaymentServlet());
    async.setAsyncSupported(true);
    context.addServlet(async, "/payments/async");
    context.getServletHandler().setDecodeAmbiguousURIs(decodeAmbiguousUris);
    server.setHandler(context);
    server.start();
  }

  int port() {
    return ((NetworkConnector) server.getConnectors()[0]).getLocalPort();
  }

  String uri(String pathAndQuery) {
    return "http://127.0.0.1:" + port() + pathAndQuery;
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }

  /** Counts a run, then answers 201 from another thread, after the filter chain has returned. */
  private final class AsyncPaymentServlet extends HttpServlet {
    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) {
      runs.incrementAndGet();
      AsyncContext async = request.startAsync();
      async.start(
          () -> {
            try {
              Thread.sleep(200);
              HttpServletResponse late = (HttpServletResponse) async.getResponse();
              late.setStatus(201);
              late.getWriter().write("answered late");
              async.complete();
            } catch (Exception | Error e) {
              // The filter failed the request and the container ended it: nothing to answer.
            }
          });
    }
  }

  private final class PaymentServlet extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      response.setContentType("text/plain");
      response.getWriter().write("up");
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      int run = runs.incrementAndGet();
      String key = IdempotentRequests.key(request).orElse("no-key");
      if (request.getParameter("reject") != null) {
        response.setStatus(Integer.parseInt(request.getParameter("reject")));
        response.setContentType("text/plain");
        response.getWriter().write("rejected in run " + run);
        return;
      }
      long amount =
          request.getContentType().startsWith("application/x-www-form-urlencoded")
              ? Long.parseLong(request.getParameter("amount"))
              : Long.parseLong(new String(request.getInputStream().readAllBytes()).trim());
      try {
        write(request, key, amount);
      } catch (SQLException e) {
        throw new IOException(e);
      }
      if (request.getParameter("gate") != null) {
        try {
          gate.await(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (request.getParameter("sleepMs") != null) {
        try {
          Thread.sleep(Long.parseLong(request.getParameter("sleepMs")));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      String fail =
          request.getHeader("X-Fail") != null
              ? request.getHeader("X-Fail")
              : request.getParameter("fail");
      if ("500".equals(fail)) {
        response.sendError(500, "upstream failed");
        return;
      }
      if ("throw".equals(fail)) {
        throw new IllegalStateException("the handler broke after its write");
      }
      if ("error".equals(fail)) {
        throw new StackOverflowError("the handler recursed too deep after its write");
      }
      if ("serialization".equals(fail)) {
        try (Statement statement = IdempotentRequests.connection(request).createStatement()) {
          statement.execute(
              "DO $$ BEGIN RAISE EXCEPTION 'a concurrent update won'"
                  + " USING ERRCODE = 'serialization_failure'; END $$");
        } catch (SQLException e) {
          throw new IOException(e);
        }
      }
      if ("swallow".equals(fail)) {
        swallowDuplicateError(request);
      }
      if ("commit".equals(fail)) {
        try {
          IdempotentRequests.connection(request).commit();
        } catch (SQLException e) {
          throw new IOException(e);
        }
      }
      String redirect = request.getParameter("redirect");
      if ("302".equals(redirect)) {
        response.sendRedirect("/payments/" + key);
        return;
      }
      if (redirect != null) {
        response.setStatus(Integer.parseInt(redirect));
        response.setHeader("Location", "/payments/" + key);
        return;
      }
      response.setStatus(201);
      response.setHeader("Location", "/payments/" + key);
      response.addHeader("Set-Cookie", "session=secret");
      if (request.getParameter("big") != null) {
        response.setContentType("text/plain");
        byte[] body = "x".repeat(Integer.parseInt(request.getParameter("big"))).getBytes();
        response.getOutputStream().write(body);
        return;
      }
      response.setContentType("text/plain");
      PrintWriter writer = response.getWriter();
      writer.write(
          "paid €"
              + amount
              + " for "
              + IdempotentRequests.scope(request).orElse("nobody")
              + " in run "
              + run);
    }

    /**
     * Catches a unique violation ("already booked") and carries on, with no savepoint: PostgreSQL
     * has aborted the inbox transaction, and commits none of it.
     */
    private void swallowDuplicateError(HttpServletRequest request) {
      try (Statement statement = IdempotentRequests.connection(request).createStatement()) {
        statement.execute(
            "DO $$ BEGIN RAISE EXCEPTION 'already booked' USING ERRCODE = 'unique_violation';"
                + " END $$");
      } catch (SQLException alreadyBooked) {
        // The idiom under test: the error is taken for "nothing to do".
      }
    }

    private void write(HttpServletRequest request, String key, long amount) throws SQLException {
      var transaction = IdempotentRequests.transaction(request);
      if (transaction.isEmpty()) {
        // Leased mode: the effect is outside the inbox's transaction.
        try (Connection connection = dataSource.getConnection()) {
          effects.apply(connection, key, amount);
        }
        return;
      }
      if (request.getParameter("close") != null) {
        transaction.get().close();
      }
      effects.apply(transaction.get(), key, amount);
    }
  }
}
