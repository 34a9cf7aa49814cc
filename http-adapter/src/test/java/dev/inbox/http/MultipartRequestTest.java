package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.MultipartConfigElement;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.EnumSet;
import java.util.UUID;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.NetworkConnector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

/**
 * A multipart request with a key. The filter reads the body for the fingerprint, and the
 * container's multipart parser reads the container's own input, which is then gone: the application
 * would find no parts. So such a request is refused with 415 before anything is recorded, and the
 * same request without a key reaches the application untouched.
 */
class MultipartRequestTest extends FilterTestBase {

  private static final java.util.concurrent.atomic.AtomicInteger uploads =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Answers 201 with the {@code amount} part's text. */
  static final class UploadServlet extends HttpServlet {
    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException, jakarta.servlet.ServletException {
      uploads.incrementAndGet();
      Part amount = request.getPart("amount");
      String text =
          amount == null
              ? "no amount part"
              : new String(amount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      response.setStatus(amount == null ? 400 : 201);
      response.setContentType("text/plain;charset=UTF-8");
      response.getWriter().print(text);
    }
  }

  @Test
  void a_multipart_request_with_a_key_is_refused_before_anything_is_recorded() throws Exception {
    HttpResponse<String> without = post(startUploads(false), "k-" + UUID.randomUUID());
    assertThat(without.statusCode()).as("without the filter: " + without.body()).isEqualTo(201);
    uploads.set(0);

    int port = startUploads(true);
    String key = "k-" + UUID.randomUUID();
    for (int attempt = 1; attempt <= 3; attempt++) {
      HttpResponse<String> refused = post(port, key);
      assertThat(refused.statusCode()).as("attempt %d: %s", attempt, refused.body()).isEqualTo(415);
      assertThat(refused.body())
          .contains("multipart-not-supported")
          .contains("\"title\":\"Unsupported Media Type\"");
    }
    assertThat(uploads.get()).as("uploads the application handled").isZero();
    assertThat(inbox.admin().find("uploads", key)).as("the key's record").isEmpty();

    HttpResponse<String> keyless = post(port, null);
    assertThat(keyless.statusCode()).as("without a key: " + keyless.body()).isEqualTo(201);
    assertThat(keyless.body()).isEqualTo("125");
  }

  private Server started;

  private int startUploads(boolean withFilter) throws Exception {
    if (started != null) {
      started.stop();
    }
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    if (withFilter) {
      IdempotencyFilter filter =
          IdempotencyFilter.builder(inbox)
              .scopeResolver(ScopeResolver.global("uploads"))
              .keyRequired(false)
              .build();
      context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    ServletHolder uploads = new ServletHolder(new UploadServlet());
    uploads
        .getRegistration()
        .setMultipartConfig(
            new MultipartConfigElement(
                Files.createTempDirectory("inbox-multipart").toString(), 1 << 20, 1 << 20, 0));
    context.addServlet(uploads, "/uploads");
    server.setHandler(context);
    server.start();
    started = server;
    return ((NetworkConnector) server.getConnectors()[0]).getLocalPort();
  }

  @org.junit.jupiter.api.AfterEach
  void stopUploads() throws Exception {
    if (started != null) {
      started.stop();
      started = null;
    }
  }

  private static HttpResponse<String> post(int port, String key) throws Exception {
    String boundary = "inbox-boundary";
    String body =
        "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n125\r\n--"
            + boundary
            + "--\r\n";
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/uploads"))
            .header("Content-Type", "multipart/form-data; boundary=" + boundary)
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
