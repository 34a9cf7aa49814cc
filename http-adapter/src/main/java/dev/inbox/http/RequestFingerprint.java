package dev.inbox.http;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The SHA-256 of what makes two requests the same request: method, routed path with the raw path's
 * {@code ;} parameters, query, content type, the configured headers and the body. Each part ends
 * with a zero byte, so that no two different requests feed the digest the same bytes.
 */
final class RequestFingerprint {
  private final List<String> headers;

  RequestFingerprint(List<String> headers) {
    this.headers = List.copyOf(headers);
  }

  /**
   * The path is the one the container routes on, behind the context's own path, followed by the raw
   * path's {@code ;} parameters when it has any: the request URI exactly when the client sent the
   * path in its plain form, so that such requests keep the fingerprints they had when the raw
   * request URI was used.
   */
  byte[] of(BufferedRequest request, String path) {
    MessageDigest digest = Fingerprints.newDigest();
    update(digest, request.getMethod().toUpperCase(Locale.ROOT));
    update(
        digest,
        pathPart(
            request.getServletContext().getContextPath() + path, RoutedPath.parameters(request)));
    update(digest, Objects.toString(request.getQueryString(), ""));
    update(digest, Objects.toString(request.getContentType(), ""));
    for (String header : headers) {
      update(digest, header.toLowerCase(Locale.ROOT));
      update(digest, String.join(",", Collections.list(request.getHeaders(header))));
    }
    digest.update(request.body());
    return digest.digest();
  }

  /**
   * The decoded path with its own {@code ;} and {@code %} escaped (a path rarely has them), so that
   * the first {@code ;} starts the parameters, and no path without them reads as one with them.
   */
  private static String pathPart(String path, String parameters) {
    String escaped =
        path.indexOf('%') < 0 && path.indexOf(';') < 0
            ? path
            : path.replace("%", "%25").replace(";", "%3B");
    return parameters.isEmpty() ? escaped : escaped + ";" + parameters;
  }

  private static void update(MessageDigest digest, String part) {
    digest.update(part.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) 0);
  }
}
