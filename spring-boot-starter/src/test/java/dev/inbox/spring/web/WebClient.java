package dev.inbox.spring.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/** HTTP for the tests: the JDK's client, and raw bytes for what no client sends as written. */
final class WebClient {
  private final int port;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  WebClient(int port) {
    this.port = port;
  }

  /** POSTs a text body; a null key sends no Idempotency-Key, a null user no credentials. */
  HttpResponse<String> post(String path, String key, String body, String user) throws Exception {
    return http.send(request(path, key, body, user), HttpResponse.BodyHandlers.ofString());
  }

  /** POSTs a text body and keeps the answer's bytes as they came, for charset checks. */
  HttpResponse<byte[]> postForBytes(String path, String key, String body) throws Exception {
    return http.send(request(path, key, body, null), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** POSTs a body of the given content type, such as a multipart form. */
  HttpResponse<String> postAs(String path, String key, String contentType, String body)
      throws Exception {
    return http.send(
        request(path, key, contentType, body, null), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String path, String key, String body, String user) {
    return request(path, key, "text/plain", body, user);
  }

  private HttpRequest request(
      String path, String key, String contentType, String body, String user) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    if (user != null) {
      request.header("Authorization", basic(user));
    }
    return request.build();
  }

  HttpResponse<String> post(String path, String key, String body) throws Exception {
    return post(path, key, body, null);
  }

  HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(60))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Sends a POST exactly as written, with the key's bytes as given (the JDK's client refuses or
   * re-encodes some of them; null: no key), and returns the whole response as ISO-8859-1 text.
   */
  String raw(String target, byte[] key, String body) throws IOException {
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.writeBytes(
        ("POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n")
            .getBytes(StandardCharsets.ISO_8859_1));
    request.writeBytes("Content-Type: text/plain\r\n".getBytes(StandardCharsets.US_ASCII));
    if (key != null) {
      request.writeBytes("Idempotency-Key: ".getBytes(StandardCharsets.US_ASCII));
      request.writeBytes(key);
      request.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    byte[] content = body.getBytes(StandardCharsets.UTF_8);
    request.writeBytes(
        ("Content-Length: " + content.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    request.writeBytes(content);
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(60_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.toByteArray());
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  static int status(String rawResponse) {
    return Integer.parseInt(rawResponse.substring(9, 12));
  }

  private static String basic(String user) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8));
  }
}
