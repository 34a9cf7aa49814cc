package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.http.HttpServletResponse;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.nio.charset.Charset;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * A charset named by {@code setContentType} after {@code getWriter()} is ignored, as the Servlet
 * spec has containers do: the writer goes on encoding in its charset, and the Content-Type sent and
 * stored for replays must name that one, or the client decodes UTF-8 bytes as ISO-8859-1.
 */
class BufferedResponseLateCharsetTest {

  @Test
  void the_content_type_names_the_charset_the_body_was_written_in() {
    BufferedResponse response = new BufferedResponse(containerResponse());
    PrintWriter writer = response.getWriter(); // UTF-8: no charset was set yet
    response.setContentType("text/plain;charset=ISO-8859-1"); // ignored by a servlet container
    writer.print("café");

    byte[] body = response.body();
    List<String> types = response.headers().get("Content-Type");
    assertThat(types).hasSize(1);
    Charset declared = Charset.forName(charsetOf(types.get(0)));
    assertThat(new String(body, declared))
        .as("the body decoded with the charset its Content-Type '%s' names", types.get(0))
        .isEqualTo("café");
  }

  private static String charsetOf(String contentType) {
    for (String part : contentType.split(";")) {
      String p = part.trim();
      if (p.toLowerCase(Locale.ROOT).startsWith("charset=")) {
        return p.substring("charset=".length());
      }
    }
    return "ISO-8859-1";
  }

  /** A container's fresh response: status 200, nothing else needed by BufferedResponse. */
  private static HttpServletResponse containerResponse() {
    return (HttpServletResponse)
        Proxy.newProxyInstance(
            HttpServletResponse.class.getClassLoader(),
            new Class<?>[] {HttpServletResponse.class},
            (proxy, method, args) -> {
              if (method.getName().equals("getStatus")) {
                return 200;
              }
              Class<?> type = method.getReturnType();
              if (type == boolean.class) {
                return false;
              }
              if (type == int.class) {
                return 0;
              }
              if (type == long.class) {
                return 0L;
              }
              return null;
            });
  }
}
