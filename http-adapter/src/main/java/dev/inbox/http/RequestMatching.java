package dev.inbox.http;

import dev.inbox.InboxKeys;
import dev.inbox.http.spi.RequestOutcome;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Decides which requests the filter protects, and turns each one into a {@link KeyedRequest} or a
 * 4xx answer before anything is claimed: the method and dispatch, the routed path, the key header,
 * the scope and the body's size, in that order. Nothing here touches the database.
 */
final class RequestMatching {
  /**
   * The dispatches the filter decides on. An ERROR dispatch carries the error page of a request
   * that failed, and an ASYNC one the rest of a request whose handler went async: neither is a new
   * request to claim.
   */
  private static final Set<DispatcherType> PROTECTED_DISPATCHES =
      Collections.unmodifiableSet(
          EnumSet.of(DispatcherType.REQUEST, DispatcherType.FORWARD, DispatcherType.INCLUDE));

  /**
   * Marks a request that a pass of the filter protects, so that a forward or include inside it,
   * which would otherwise wait on its own key and store the 409 as the key's answer, passes
   * through.
   */
  private static final String PROTECTING_ATTRIBUTE =
      IdempotencyFilter.class.getName() + ".protecting";

  private final Set<String> methods;
  private final Predicate<String> paths;
  private final String headerName;
  private final boolean keyRequired;
  private final ScopeResolver scopes;
  private final int maxRequestBody;
  private final RequestFingerprint fingerprint;

  RequestMatching(
      Set<String> methods,
      Predicate<String> paths,
      String headerName,
      boolean keyRequired,
      ScopeResolver scopes,
      int maxRequestBody,
      RequestFingerprint fingerprint) {
    this.methods = Set.copyOf(methods);
    this.paths = paths;
    this.headerName = headerName;
    this.keyRequired = keyRequired;
    this.scopes = scopes;
    this.maxRequestBody = maxRequestBody;
    this.fingerprint = fingerprint;
  }

  /** What the filter does with a request it decides on: exactly one of the three. */
  record Match(Answer rejection, KeyedRequest request) {
    static final Match PASS_THROUGH = new Match(null, null);

    static Match rejected(Answer rejection) {
      return new Match(rejection, null);
    }

    static Match keyed(KeyedRequest request) {
      return new Match(null, request);
    }

    boolean passesThrough() {
      return rejection == null && request == null;
    }
  }

  /**
   * Whether the filter decides on the request at all: one of its methods, a dispatch that may be a
   * new request, and no pass of the filter protecting it already.
   */
  boolean decides(HttpServletRequest request) {
    return methods.contains(request.getMethod().toUpperCase(Locale.ROOT))
        && PROTECTED_DISPATCHES.contains(request.getDispatcherType())
        && request.getAttribute(PROTECTING_ATTRIBUTE) == null;
  }

  /**
   * Checks a request the filter decides on. A keyed request carries the scope and key attributes,
   * and is marked protected until {@link #endProtection}; its body is read here, for the
   * fingerprint.
   */
  Match match(HttpServletRequest request) throws IOException {
    String path = RoutedPath.of(request);
    if (path == null) {
      return rejectUnread(
          RequestOutcome.INVALID_PATH,
          "path-ambiguous",
          "the request path "
              + InboxKeys.describe(request.getRequestURI())
              + " cannot be decoded unambiguously (an encoded '/' or dot segment, an empty"
              + " segment, or a parameter on a dot segment); send the path in its plain form");
    }
    if (!paths.test(path)) {
      return Match.PASS_THROUGH;
    }
    List<String> values = Collections.list(request.getHeaders(headerName));
    if (values.isEmpty()) {
      return keyRequired
          ? rejectUnread(
              RequestOutcome.MISSING_KEY,
              "idempotency-key-missing",
              "this endpoint requires an " + headerName + " header")
          : Match.PASS_THROUGH;
    }
    if (values.size() > 1) {
      return rejectUnread(
          RequestOutcome.INVALID_KEY,
          "idempotency-key-repeated",
          "send exactly one " + headerName + " header, not " + values.size());
    }
    String key;
    try {
      key = IdempotencyKeyHeader.parse(values.get(0));
    } catch (IllegalArgumentException e) {
      String rule =
          e instanceof IdempotencyKeyHeader.NotAsciiException
              ? "idempotency-key-not-ascii"
              : "idempotency-key-invalid";
      return rejectUnread(RequestOutcome.INVALID_KEY, rule, headerName + " " + e.getMessage());
    }
    String scope = scopes.scopeOf(request);
    if (scope == null || InboxKeys.brokenRule(scope) != null) {
      return rejectUnread(
          RequestOutcome.NO_SCOPE,
          "scope-unresolved",
          "the request names no known client or tenant to own its "
              + headerName
              + "; authenticate or send valid credentials");
    }
    if (isMultipart(request)) {
      // The container parses parts from its own input, which the fingerprint has read by then:
      // the application would find no parts, and the key would count a failed attempt each time.
      return rejectUnread(
          RequestOutcome.UNSUPPORTED_MEDIA_TYPE,
          "multipart-not-supported",
          "a multipart request body cannot be used with "
              + headerName
              + ": send the request with a body that is not multipart/*, or without "
              + headerName);
    }
    BufferedRequest buffered = BufferedRequest.read(request, maxRequestBody);
    if (buffered == null) {
      return rejectUnread(
          RequestOutcome.TOO_LARGE,
          "request-body-too-large",
          "the request body is larger than " + maxRequestBody + " bytes");
    }
    buffered.setAttribute(IdempotentRequests.SCOPE_ATTRIBUTE, scope);
    buffered.setAttribute(IdempotentRequests.KEY_ATTRIBUTE, key);
    KeyedRequest keyed = new KeyedRequest(buffered, scope, key, fingerprint.of(buffered, path));
    buffered.setAttribute(PROTECTING_ATTRIBUTE, Boolean.TRUE);
    return Match.keyed(keyed);
  }

  /** Lets forwards and includes of the request be decided again, once its pass has answered. */
  static void endProtection(KeyedRequest keyed) {
    keyed.request().removeAttribute(PROTECTING_ATTRIBUTE);
  }

  private static boolean isMultipart(HttpServletRequest request) {
    String type = request.getContentType();
    return type != null && type.trim().toLowerCase(Locale.ROOT).startsWith("multipart/");
  }

  /**
   * Rejects a request whose body was never read. The response is committed before the container
   * could drain the body, so the container closes the connection; saying so in {@code Connection:
   * close} stops clients from reusing a connection that is about to go away.
   */
  private static Match rejectUnread(RequestOutcome outcome, String rule, String detail) {
    return Match.rejected(
        new Answer(
            outcome,
            response -> {
              response.setHeader("Connection", "close");
              Problems.send(response, outcome, rule, detail);
            }));
  }
}
