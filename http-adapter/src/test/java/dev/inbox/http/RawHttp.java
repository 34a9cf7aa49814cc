package dev.inbox.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * HTTP/1.1 over a plain socket, so that a test sends exactly the bytes it means: a request target
 * that no client library would normalise, and header values as raw UTF-8 bytes that no client
 * library would encode or refuse. Every request asks for {@code Connection: close}, and the
 * response is read to the end of the stream.
 */
final class RawHttp {
  /** Long enough for a loaded machine, short enough that a hung server fails the test. */
  private static final int READ_TIMEOUT_MILLIS = 60_000;

  private RawHttp() {}

  /** A response as the client received it; header names are matched case-insensitively. */
  record Response(int status, Map<String, List<String>> headers, String body) {
    static Response of(HttpResponse<String> response) {
      Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      headers.putAll(response.headers().map());
      return new Response(response.statusCode(), headers, response.body());
    }

    Optional<String> header(String name) {
      List<String> values = headers.get(name);
      return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }

    boolean replayed() {
      return header(IdempotencyFilter.REPLAYED_HEADER).orElse("").equals("true");
    }
  }

  /**
   * POSTs a plain-text body to the request target, with the tenant's API key and the
   * Idempotency-Key's raw bytes.
   */
  static Response post(int port, String target, String apiKey, byte[] idempotencyKey, String body)
      throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    head.writeBytes(
        ("POST "
                + target
                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: "
                + apiKey
                + "\r\nContent-Type: text/plain\r\nIdempotency-Key: ")
            .getBytes(StandardCharsets.US_ASCII));
    head.writeBytes(idempotencyKey);
    head.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    return send(port, head.toByteArray(), body.getBytes(StandardCharsets.UTF_8));
  }

  /** POSTs with an ASCII Idempotency-Key, and further header lines (each without its CRLF). */
  static Response post(
      int port,
      String target,
      String apiKey,
      String idempotencyKey,
      String body,
      String... headerLines)
      throws IOException {
    StringBuilder key = new StringBuilder(idempotencyKey);
    for (String line : headerLines) {
      key.append("\r\n").append(line);
    }
    return post(port, target, apiKey, key.toString().getBytes(StandardCharsets.US_ASCII), body);
  }

  /**
   * Sends the request line and headers (each ending in CRLF, without the blank line), then the body
   * with its Content-Length.
   */
  static Response send(int port, byte[] head, byte[] body) throws IOException {
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.writeBytes(head);
    request.writeBytes(
        ("Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    request.writeBytes(body);
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(READ_TIMEOUT_MILLIS);
      OutputStream out = socket.getOutputStream();
      try {
        // One write: a server that refuses a header answers and closes as soon as it has parsed
        // it, and a write of the rest after that close fails with a broken pipe.
        out.write(request.toByteArray());
        out.flush();
      } catch (IOException writing) {
        // The server answered and closed before taking the whole request: its answer is what
        // the test is about, and it is already on its way back.
        try {
          return read(socket.getInputStream());
        } catch (IOException reading) {
          writing.addSuppressed(reading);
          throw writing;
        }
      }
      return read(socket.getInputStream());
    }
  }

  private static Response read(InputStream in) throws IOException {
    byte[] all = in.readAllBytes();
    String text = new String(all, StandardCharsets.ISO_8859_1);
    int end = text.indexOf("\r\n\r\n");
    if (end < 0) {
      throw new IOException("no complete response head in " + all.length + " bytes: " + text);
    }
    String[] lines = text.substring(0, end).split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers
          .computeIfAbsent(lines[i].substring(0, colon), n -> new ArrayList<>())
          .add(lines[i].substring(colon + 1).trim());
    }
    byte[] body = Arrays.copyOfRange(all, end + 4, all.length);
    String encoding = headers.getOrDefault("Transfer-Encoding", List.of("")).get(0);
    if (encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
      body = dechunk(body);
    }
    return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
  }

  private static byte[] dechunk(byte[] chunked) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int at = 0;
    while (true) {
      int lineEnd = at;
      while (chunked[lineEnd] != '\r') {
        lineEnd++;
      }
      String size = new String(chunked, at, lineEnd - at, StandardCharsets.US_ASCII);
      int length = Integer.parseInt(size.split(";")[0].trim(), 16);
      if (length == 0) {
        return out.toByteArray();
      }
      out.write(chunked, lineEnd + 2, length);
      at = lineEnd + 2 + length + 2;
    }
  }
}
