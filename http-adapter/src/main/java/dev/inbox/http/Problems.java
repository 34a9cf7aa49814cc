package dev.inbox.http;

import dev.inbox.http.spi.RequestOutcome;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Writes RFC 9457 problem details. The type is {@code about:blank}, so the title is the status's
 * reason phrase; the extension member {@code rule} names the rule that failed, for machines, and
 * {@code detail} says it for people.
 */
final class Problems {
  static final String CONTENT_TYPE = "application/problem+json";

  private static final Map<Integer, String> TITLES =
      Map.of(
          400, "Bad Request",
          401, "Unauthorized",
          409, "Conflict",
          413, "Content Too Large",
          415, "Unsupported Media Type",
          422, "Unprocessable Content",
          500, "Internal Server Error",
          503, "Service Unavailable");

  private Problems() {}

  /** Sends the problem of an outcome the filter always answers with one, at its status. */
  static void send(HttpServletResponse response, RequestOutcome outcome, String rule, String detail)
      throws IOException {
    int status =
        outcome
            .problemStatus()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "answering " + outcome + " with a problem of its own indicates a bug"));
    send(response, status, rule, detail);
  }

  static void send(HttpServletResponse response, int status, String rule, String detail)
      throws IOException {
    byte[] body =
        ("{\"type\":\"about:blank\",\"title\":"
                + json(TITLES.getOrDefault(status, "Error"))
                + ",\"status\":"
                + status
                + ",\"rule\":"
                + json(rule)
                + ",\"detail\":"
                + json(detail)
                + "}")
            .getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.setContentType(CONTENT_TYPE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  static String json(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
