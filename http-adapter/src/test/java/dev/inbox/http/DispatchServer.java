package dev.inbox.http;

import dev.inbox.Inbox;
import dev.inbox.testing.EffectsTable;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.NetworkConnector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Jetty 12 whose filter is registered for the given dispatcher types, as Spring or a custom
 * setup may register it, with servlets that dispatch to the payments servlet:
 *
 * <ul>
 *   <li>{@code /payments}: writes one effect row through the inbox transaction and answers 201
 *       {@code run N}; with {@code X-Fail: throw} it throws after its write
 *   <li>{@code /legacy}: forwards to {@code /payments}
 *   <li>{@code /inc}: includes {@code /payments}
 *   <li>{@code /oops}: the error page for 500 and any exception
 * </ul>
 */
final class DispatchServer implements AutoCloseable {
  final AtomicInteger runs = new AtomicInteger();
  final AtomicInteger errorPageRuns = new AtomicInteger();
  private final Server server;

  DispatchServer(
      Inbox inbox,
      DataSource dataSource,
      EffectsTable effects,
      EnumSet<DispatcherType> dispatch,
      UnaryOperator<IdempotencyFilter.Builder> customize)
      throws Exception {
    IdempotencyFilter filter =
        customize
            .apply(
                IdempotencyFilter.builder(inbox)
                    .scopeResolver(ScopeResolver.header("X-Api-Key", TestServer.TENANTS))
                    .inFlightWait(Duration.ofSeconds(3)))
            .build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addFilter(new FilterHolder(filter), "/*", dispatch);
    context.addServlet(new ServletHolder(new PaymentServlet(effects)), "/payments");
    context.addServlet(new ServletHolder(new Dispatching(false)), "/legacy");
    context.addServlet(new ServletHolder(new Dispatching(true)), "/inc");
    context.addServlet(new ServletHolder(new ErrorPage()), "/oops");
    ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
    errors.addErrorPage(500, "/oops");
    errors.addErrorPage(Throwable.class, "/oops");
    context.setErrorHandler(errors);
    server.setHandler(context);
    server.start();
  }

  int port() {
    return ((NetworkConnector) server.getConnectors()[0]).getLocalPort();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }

  private final class PaymentServlet extends HttpServlet {
    private final EffectsTable effects;

    PaymentServlet(EffectsTable effects) {
      this.effects = effects;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      int run = runs.incrementAndGet();
      String key = IdempotentRequests.key(request).orElse("no-key");
      long amount = Long.parseLong(new String(request.getInputStream().readAllBytes()).trim());
      try {
        effects.apply(IdempotentRequests.connection(request), key, amount);
      } catch (SQLException e) {
        throw new IOException(e);
      }
      if ("throw".equals(request.getHeader("X-Fail"))) {
        throw new IllegalStateException("the handler broke after its write");
      }
      response.setStatus(201);
      response.setContentType("text/plain");
      response.getWriter().write("run " + run);
    }
  }

  /** Forwards, or includes, the request to {@code /payments}. */
  private static final class Dispatching extends HttpServlet {
    private final boolean include;

    Dispatching(boolean include) {
      this.include = include;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws ServletException, IOException {
      if (include) {
        request.getRequestDispatcher("/payments").include(request, response);
      } else {
        request.getRequestDispatcher("/payments").forward(request, response);
      }
    }
  }

  private final class ErrorPage extends HttpServlet {
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      errorPageRuns.incrementAndGet();
      response.setContentType("text/plain");
      response.getWriter().write("error page");
    }
  }
}
