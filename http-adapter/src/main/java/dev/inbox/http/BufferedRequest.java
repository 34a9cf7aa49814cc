package dev.inbox.http;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A request whose body was read once, for the fingerprint, and can be read again downstream as
 * often as the application likes. Because the container's input stream is consumed, the form
 * parameters of an {@code application/x-www-form-urlencoded} body are parsed here, together with
 * the query string.
 */
final class BufferedRequest extends HttpServletRequestWrapper {
  private final byte[] body;
  private Map<String, String[]> formParameters;

  private BufferedRequest(HttpServletRequest request, byte[] body) {
    super(request);
    this.body = body;
  }

  /**
   * Reads the whole body.
   *
   * @return null when the body is larger than {@code maxBytes}
   */
  static BufferedRequest read(HttpServletRequest request, int maxBytes) throws IOException {
    long declared = request.getContentLengthLong();
    if (declared > maxBytes) {
      return null;
    }
    InputStream in = request.getInputStream();
    byte[] body = in.readNBytes(maxBytes + 1);
    return body.length > maxBytes ? null : new BufferedRequest(request, body);
  }

  byte[] body() {
    return body;
  }

  @Override
  public ServletInputStream getInputStream() {
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    return new ServletInputStream() {
      @Override
      public int read() {
        return in.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        return in.read(b, off, len);
      }

      @Override
      public boolean isFinished() {
        return in.available() == 0;
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setReadListener(ReadListener listener) {
        throw new UnsupportedOperationException(
            "the idempotency filter buffered the body; read it with blocking reads");
      }
    };
  }

  @Override
  public BufferedReader getReader() {
    return new BufferedReader(new InputStreamReader(getInputStream(), charset()));
  }

  @Override
  public String getParameter(String name) {
    if (!isForm()) {
      return super.getParameter(name);
    }
    String[] values = form().get(name);
    return values == null ? null : values[0];
  }

  @Override
  public Map<String, String[]> getParameterMap() {
    return isForm() ? form() : super.getParameterMap();
  }

  @Override
  public Enumeration<String> getParameterNames() {
    return isForm() ? Collections.enumeration(form().keySet()) : super.getParameterNames();
  }

  @Override
  public String[] getParameterValues(String name) {
    if (!isForm()) {
      return super.getParameterValues(name);
    }
    String[] values = form().get(name);
    return values == null ? null : values.clone();
  }

  private boolean isForm() {
    String type = getContentType();
    return type != null
        && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded");
  }

  private Map<String, String[]> form() {
    if (formParameters == null) {
      Map<String, List<String>> values = new LinkedHashMap<>();
      Charset charset = charset();
      parse(getQueryString(), charset, values);
      parse(new String(body, charset), charset, values);
      Map<String, String[]> result = new LinkedHashMap<>();
      values.forEach((name, list) -> result.put(name, list.toArray(String[]::new)));
      formParameters = Collections.unmodifiableMap(result);
    }
    return formParameters;
  }

  private static void parse(String encoded, Charset charset, Map<String, List<String>> into) {
    if (encoded == null || encoded.isEmpty()) {
      return;
    }
    for (String pair : encoded.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), charset);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), charset);
      into.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }
  }

  private Charset charset() {
    String encoding = getCharacterEncoding();
    try {
      return encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
    } catch (IllegalArgumentException e) {
      return StandardCharsets.UTF_8;
    }
  }
}
