package dev.inbox.http;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Holds the application's response until the inbox transaction has committed, so that a client
 * never sees a success for a write that was rolled back. Status, headers and body all stay here
 * until {@link #writeTo} copies them to the real response; nothing reaches the client before.
 *
 * <p>A writer without an explicit charset writes UTF-8, and the Content-Type then says so.
 */
final class BufferedResponse extends HttpServletResponseWrapper {
  private static final String CONTENT_TYPE = "Content-Type";
  private static final String CONTENT_LENGTH = "Content-Length";

  private final ByteArrayOutputStream body = new ByteArrayOutputStream();
  private final Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
  private int status;
  private String characterEncoding;
  private PrintWriter writer;
  private ServletOutputStream stream;

  BufferedResponse(HttpServletResponse response) {
    super(response);
    // Whatever the response already says (a dispatch may come with a status), not a made-up 200.
    status = response.getStatus();
  }

  @Override
  public void setStatus(int sc) {
    status = sc;
  }

  @Override
  public void sendError(int sc, String msg) {
    reset();
    status = sc;
    if (msg != null) {
      setContentType("text/plain;charset=UTF-8");
      body.writeBytes(msg.getBytes(StandardCharsets.UTF_8));
    }
  }

  @Override
  public void sendError(int sc) {
    sendError(sc, null);
  }

  @Override
  public void sendRedirect(String location) {
    resetBuffer();
    status = SC_FOUND;
    setHeader("Location", location);
  }

  @Override
  public int getStatus() {
    return status;
  }

  @Override
  public void setHeader(String name, String value) {
    if (name == null || CONTENT_LENGTH.equalsIgnoreCase(name)) {
      return; // the length is set from the buffered body
    }
    if (CONTENT_TYPE.equalsIgnoreCase(name)) {
      setContentType(value);
      return;
    }
    if (value == null) {
      headers.remove(name);
      return;
    }
    List<String> values = new ArrayList<>();
    values.add(value);
    headers.put(name, values);
  }

  @Override
  public void addHeader(String name, String value) {
    if (name == null || value == null || CONTENT_LENGTH.equalsIgnoreCase(name)) {
      return;
    }
    if (CONTENT_TYPE.equalsIgnoreCase(name)) {
      setContentType(value);
      return;
    }
    headers.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
  }

  @Override
  public void setIntHeader(String name, int value) {
    setHeader(name, Integer.toString(value));
  }

  @Override
  public void addIntHeader(String name, int value) {
    addHeader(name, Integer.toString(value));
  }

  @Override
  public void setDateHeader(String name, long date) {
    setHeader(name, httpDate(date));
  }

  @Override
  public void addDateHeader(String name, long date) {
    addHeader(name, httpDate(date));
  }

  @Override
  public boolean containsHeader(String name) {
    return headers.containsKey(name);
  }

  @Override
  public String getHeader(String name) {
    List<String> values = headers.get(name);
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  @Override
  public Collection<String> getHeaders(String name) {
    return List.copyOf(headers.getOrDefault(name, List.of()));
  }

  @Override
  public Collection<String> getHeaderNames() {
    return List.copyOf(headers.keySet());
  }

  @Override
  public void setContentType(String type) {
    if (type == null) {
      headers.remove(CONTENT_TYPE);
      return;
    }
    String charset = charsetOf(type);
    if (charset != null && writer == null) {
      characterEncoding = charset;
    }
    List<String> values = new ArrayList<>();
    // After getWriter() the body's charset is settled: as the Servlet spec has containers do, a
    // charset named now is ignored, and getContentType() names the writer's.
    values.add(charset != null && writer != null ? withoutCharset(type) : type);
    headers.put(CONTENT_TYPE, values);
  }

  @Override
  public String getContentType() {
    String type = getHeader(CONTENT_TYPE);
    if (type == null || characterEncoding == null || charsetOf(type) != null) {
      return type;
    }
    return type + ";charset=" + characterEncoding;
  }

  @Override
  public void setCharacterEncoding(String charset) {
    if (writer == null) {
      characterEncoding = charset;
    }
  }

  @Override
  public String getCharacterEncoding() {
    return characterEncoding == null ? StandardCharsets.UTF_8.name() : characterEncoding;
  }

  @Override
  public void setContentLength(int len) {}

  @Override
  public void setContentLengthLong(long len) {}

  @Override
  public void setBufferSize(int size) {}

  @Override
  public ServletOutputStream getOutputStream() {
    if (stream == null) {
      stream =
          new ServletOutputStream() {
            @Override
            public void write(int b) {
              body.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
              body.write(b, off, len);
            }

            @Override
            public boolean isReady() {
              return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {
              throw new UnsupportedOperationException(
                  "the idempotency filter buffers the response; async writes are not supported");
            }
          };
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() {
    if (writer == null) {
      characterEncoding = getCharacterEncoding();
      Charset charset = Charset.forName(characterEncoding);
      writer = new PrintWriter(new OutputStreamWriter(getOutputStream(), charset), false);
    }
    return writer;
  }

  @Override
  public void flushBuffer() {
    if (writer != null) {
      writer.flush();
    }
  }

  @Override
  public boolean isCommitted() {
    return false;
  }

  @Override
  public void resetBuffer() {
    flushBuffer();
    body.reset();
  }

  @Override
  public void reset() {
    resetBuffer();
    headers.clear();
    status = SC_OK;
  }

  /** The body as the application wrote it. */
  byte[] body() {
    flushBuffer();
    return body.toByteArray();
  }

  /** The headers, Content-Type with its effective charset, in the order of their names. */
  Map<String, List<String>> headers() {
    Map<String, List<String>> copy = new LinkedHashMap<>();
    headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
    String type = getContentType();
    if (type != null) {
      copy.put(CONTENT_TYPE, List.of(type));
    }
    return copy;
  }

  /** Sends what the application wrote to the client. */
  void writeTo(HttpServletResponse response) throws IOException {
    byte[] bytes = body();
    response.setStatus(status);
    headers().forEach((name, values) -> values.forEach(value -> response.addHeader(name, value)));
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  private static String charsetOf(String contentType) {
    for (String part : contentType.split(";")) {
      String p = part.trim();
      if (p.toLowerCase(Locale.ROOT).startsWith("charset=")) {
        return p.substring("charset=".length()).replace("\"", "").trim();
      }
    }
    return null;
  }

  private static String withoutCharset(String contentType) {
    StringBuilder kept = new StringBuilder();
    for (String part : contentType.split(";")) {
      if (!part.trim().toLowerCase(Locale.ROOT).startsWith("charset=")) {
        kept.append(kept.length() == 0 ? "" : ";").append(part);
      }
    }
    return kept.toString();
  }

  private static String httpDate(long epochMillis) {
    return DateTimeFormatter.RFC_1123_DATE_TIME.format(
        Instant.ofEpochMilli(epochMillis).atZone(ZoneOffset.UTC));
  }
}
