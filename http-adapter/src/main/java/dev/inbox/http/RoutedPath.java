package dev.inbox.http;

import jakarta.servlet.http.HttpServletRequest;

/**
 * The path inside the application that the container routes a request on: the servlet path plus the
 * path info, which a Servlet 6 container has decoded, stripped of {@code ;} parameters and
 * normalised (section 3.5.2), so that {@code /%70ayments}, {@code /payments;x=1} and {@code
 * /a/../payments} are all {@code /payments}. The raw request URI is never used: the servlet behind
 * those spellings is the one at {@code /payments}, and so must be the filter's decision.
 */
final class RoutedPath {
  private RoutedPath() {}

  /**
   * The routed path, or null when the container cannot tell it: Jetty throws from {@code
   * getServletPath()} for an ambiguous URI (an encoded separator or dot segment) that its URI
   * compliance let in, and a container that passes dot or empty segments on has not normalised.
   */
  static String of(HttpServletRequest request) {
    String path;
    try {
      String servletPath = request.getServletPath();
      String pathInfo = request.getPathInfo();
      path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (path.isEmpty()) {
      return "/";
    }
    return isNormalised(path) ? path : null;
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
