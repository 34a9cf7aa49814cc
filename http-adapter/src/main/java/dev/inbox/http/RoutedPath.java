package dev.inbox.http;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Locale;

/**
 * The path inside the application that the container routes a request on: the servlet path plus the
 * path info, which a Servlet 6 container has decoded, stripped of {@code ;} parameters and
 * normalised (section 3.5.2), so that {@code /%70ayments}, {@code /payments;x=1} and {@code
 * /a/../payments} are all {@code /payments}. The raw request URI never decides it: the servlet
 * behind those spellings is the one at {@code /payments}, and so must be the filter's decision.
 * During a forward the servlet path is the forward's target; during an include it is the including
 * servlet's, so the included one's is read from the include attributes.
 */
final class RoutedPath {
  private static final String SESSION_ID = "jsessionid=";

  private RoutedPath() {}

  /**
   * The routed path, or null when the container cannot tell it: Jetty throws from {@code
   * getServletPath()} for an ambiguous URI (an encoded separator or dot segment) that its URI
   * compliance let in, and a container that passes dot or empty segments on has not normalised.
   */
  static String of(HttpServletRequest request) {
    String path;
    try {
      boolean include = request.getDispatcherType() == DispatcherType.INCLUDE;
      String servletPath =
          include
              ? (String) request.getAttribute(RequestDispatcher.INCLUDE_SERVLET_PATH)
              : request.getServletPath();
      String pathInfo =
          include
              ? (String) request.getAttribute(RequestDispatcher.INCLUDE_PATH_INFO)
              : request.getPathInfo();
      path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (path.isEmpty()) {
      return "/";
    }
    return isNormalised(path) ? path : null;
  }

  /**
   * The {@code ;} parameters of the raw request path, segment by segment, or "" when it has none:
   * {@code "/;amount=100"} for {@code /payments;amount=100}, {@code "/;v=1/"} for {@code
   * /payments;v=1/charge}. The routed path drops them, yet the application may read them (JAX-RS's
   * {@code @MatrixParam}), so requests that differ in them are different requests. They are taken
   * as sent, not decoded; an empty parameter says nothing, and a session id ({@code ;jsessionid=})
   * belongs to the container: both are left out.
   */
  static String parameters(HttpServletRequest request) {
    String raw =
        request.getDispatcherType() == DispatcherType.INCLUDE
            ? (String) request.getAttribute(RequestDispatcher.INCLUDE_REQUEST_URI)
            : request.getRequestURI();
    if (raw == null || raw.indexOf(';') < 0) {
      return "";
    }
    StringBuilder shape = new StringBuilder();
    boolean any = false;
    String[] segments = raw.split("/", -1);
    for (int i = 0; i < segments.length; i++) {
      if (i > 0) {
        shape.append('/');
      }
      String segment = segments[i];
      int semicolon = segment.indexOf(';');
      if (semicolon < 0) {
        continue;
      }
      for (String parameter : segment.substring(semicolon + 1).split(";", -1)) {
        if (!parameter.isEmpty() && !parameter.toLowerCase(Locale.ROOT).startsWith(SESSION_ID)) {
          shape.append(';').append(parameter);
          any = true;
        }
      }
    }
    return any ? shape.toString() : "";
  }

  /** Starts with '/', and has no '.' or '..' segment and no empty segment but a trailing one. */
  private static boolean isNormalised(String path) {
    if (!path.startsWith("/")) {
      return false;
    }
    String[] segments = path.substring(1).split("/", -1);
    for (int i = 0; i < segments.length; i++) {
      String segment = segments[i];
      if (segment.equals(".")
          || segment.equals("..")
          || segment.isEmpty() && i < segments.length - 1) {
        return false;
      }
    }
    return true;
  }
}
