package dev.inbox.http;

import dev.inbox.Inbox;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import dev.inbox.http.micrometer.MicrometerIdempotencyListener;
import dev.inbox.http.spi.IdempotencyListener;
import dev.inbox.http.spi.RequestOutcome;
import dev.inbox.spi.Listeners;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A Jakarta Servlet 6 filter for the {@code Idempotency-Key} header
 * (draft-ietf-httpapi-idempotency-key-header), on the same inbox table and state machine as the
 * message consumers. It works in any Servlet 6 container and in Spring Boot 3.
 *
 * <p>For each request whose method and path it applies to:
 *
 * <ul>
 *   <li>A missing key (when required), a repeated header, an invalid key or a path that the
 *       container let through but cannot decode unambiguously gets 400 (a container refuses most
 *       such paths itself first: Jetty does, with its own 400); a request with no resolvable {@link
 *       ScopeResolver scope} gets 401; a body over {@link Builder#maxRequestBody} gets 413. Each
 *       carries an RFC 9457 {@code application/problem+json} body whose {@code rule} member names
 *       the rule that failed.
 *   <li>The key is claimed as (scope, key) with a SHA-256 fingerprint over the method, path (with
 *       the raw path's {@code ;} parameters), query, content type, body and the configured headers.
 *       The same key with another fingerprint gets 422.
 *   <li>A first request runs the application. A response whose status is stored (2xx, 301 to 303
 *       and 4xx by default) is recorded and, in {@link Mode#TRANSACTIONAL} mode, committed together
 *       with the application's writes; only then is it sent. Any other status, an exception or
 *       {@link Error}, or a transaction that an SQL error the handler caught had aborted (answered
 *       500), rolls the writes back and records a failure, so that the client's retry runs again (a
 *       deadlock, serialization failure or lost connection is not counted as one). In transactional
 *       mode the request runs as the handler of {@link Inbox#execute}, and the key's record is
 *       written once, with the response, when it commits; should a message consumer record the same
 *       key first, the application's writes are rolled back and the request gets that consumer's
 *       outcome.
 *   <li>A retry gets the stored status, allow-listed headers and body, with {@code
 *       Idempotent-Replayed: true}. A body over {@link Builder#maxStoredBody} is recorded by its
 *       hash only, and its replay has an empty body and {@code Idempotent-Body-Stored: false}. A
 *       key completed without a response (by a message consumer, say) gets the {@link
 *       Builder#noStoredResponse fallback}.
 *   <li>A retry while the first request is in flight waits up to {@link Builder#inFlightWait}, then
 *       gets 409 with {@code Retry-After}.
 *   <li>When the filter's own work fails, the client gets problem details that name no exception,
 *       SQL, host or port, and the log gets the detail: 503 with {@code Retry-After} ({@link
 *       Builder#unavailableRetryAfter}) when the database is unreachable, its pool exhausted or the
 *       connection lost, 500 otherwise. In leased mode, a handler that has answered gets its answer
 *       sent even when its result cannot be recorded (see {@link Mode#LEASED}). A handler that
 *       fails on the database (what {@link TransientFailures#isTransient} tells apart: a lost
 *       connection, a serialization failure, a deadlock) gets 503 the same way, with the rule
 *       {@code database-unavailable} or {@code transaction-conflict}. Any other exception thrown by
 *       the application goes on to the container's error handling, as without the filter (after the
 *       rollback and release).
 * </ul>
 *
 * <p>A key must be printable ASCII, and a byte above 0x7F in the header gets 400 with the rule
 * {@code idempotency-key-not-ascii}: the filter neither decodes the bytes as UTF-8 nor takes the
 * container's ISO-8859-1 reading of them as the key. The draft defines the field as an RFC 8941
 * sf-string, which is printable ASCII; HTTP gives other header bytes no charset (RFC 9110's opaque
 * obs-text), and clients disagree on them (curl sends {@code é} as two UTF-8 bytes, the JDK's
 * HttpClient as one ISO-8859-1 byte, and refuses {@code €}), so any decoding is a guess. A wrong
 * guess turns the key {@code xch-é-1} that a message consumer records into another key over HTTP,
 * and one payment into two. Payment APIs such as Stripe's ask for UUIDs or similar ASCII keys, and
 * a client that sends anything else is told at once, before anything is claimed. A tab inside the
 * key breaks a key rule ({@code idempotency-key-invalid}); other control bytes are refused by the
 * container before any filter runs (Jetty answers its own 400).
 *
 * <p>Register the filter for REQUEST dispatches (Spring Boot's default). Registered for more, it
 * decides a FORWARD on the path forwarded to and an INCLUDE on the included path (the container
 * then ignores the status and headers of its answer, as of any include), unless a pass of the
 * filter already protects the request: a forward or include inside a protected request passes
 * through, as do ERROR and ASYNC dispatches, which are never new requests.
 *
 * <p>Asynchronous servlets ({@code startAsync}) are not supported behind this filter: the response
 * must be complete when the chain returns. A request that starts async processing is treated as a
 * handler failure (its writes rolled back, the key released, 500), never recorded with the empty
 * response the chain returned with.
 *
 * <pre>{@code
 * IdempotencyFilter filter = IdempotencyFilter.builder(inbox)
 *     .scopeResolver(ScopeResolver.header("X-Api-Key", tenantsByApiKey))
 *     .pathPrefixes("/payments")
 *     .meterRegistry(registry)
 *     .build();
 * // in the servlet: IdempotentRequests.connection(request).prepareStatement("insert ...")
 * }</pre>
 */
public final class IdempotencyFilter implements Filter {
  /** Added with {@code true} to every replayed response. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  /** Added with {@code false} to a replay whose body was too large to store. */
  public static final String BODY_STORED_HEADER = "Idempotent-Body-Stored";

  /** Defaults to the draft's {@code Idempotency-Key}. */
  public static final String DEFAULT_HEADER_NAME = "Idempotency-Key";

  /** Defaults to POST and PATCH, the methods that are not idempotent by themselves. */
  public static final Set<String> DEFAULT_METHODS = Set.of("POST", "PATCH");

  /** A retry waits at most 5 seconds for the first request with its key, then gets 409. */
  public static final Duration DEFAULT_IN_FLIGHT_WAIT = Duration.ofSeconds(5);

  /** A 409 asks the client to retry after 1 second. */
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  /** A 503 for an unavailable database asks the client to retry after 5 seconds. */
  public static final Duration DEFAULT_UNAVAILABLE_RETRY_AFTER = Duration.ofSeconds(5);

  /**
   * A leased request whose result cannot be recorded retries recording it for at most 10 seconds
   * (and never past its lease).
   */
  public static final Duration DEFAULT_COMPLETION_RETRY = Duration.ofSeconds(10);

  /**
   * Defaults to storing 2xx, 4xx, and the redirects that end a request (301, 302 and 303: the
   * client follows them with a GET, as in post/redirect/get); 1xx, 5xx and the other 3xx (304, and
   * 307 and 308, which ask the client to send the same request elsewhere) release the key.
   */
  public static final IntPredicate DEFAULT_STORED_STATUSES =
      status ->
          status >= 200 && status < 300
              || status >= 301 && status <= 303
              || status >= 400 && status < 500;

  /** The response headers stored and replayed by default. */
  public static final Set<String> DEFAULT_REPLAYED_HEADERS =
      Set.of(
          "Content-Type",
          "Content-Language",
          "Content-Location",
          "Location",
          "ETag",
          "Last-Modified",
          "Link");

  /** Response bodies up to 1 MiB are stored; larger ones by their SHA-256 only. */
  public static final int DEFAULT_MAX_STORED_BODY = 1 << 20;

  /** Request bodies up to 1 MiB are accepted; larger ones get 413. */
  public static final int DEFAULT_MAX_REQUEST_BODY = 1 << 20;

  /**
   * What a key completed without a stored response (by a message consumer, say) gets by default:
   * 200 and a small JSON body that says so.
   */
  public static final StoredResult DEFAULT_NO_STORED_RESPONSE =
      StoredResult.of(
          200,
          Map.of("Content-Type", List.of("application/json")),
          ("{\"status\":\"already-processed\",\"detail\":\"a request or message with this key was"
                  + " already processed; no response is stored for it\"}")
              .getBytes(StandardCharsets.UTF_8));

  /** Where the handler's effects live. */
  public enum Mode {
    /**
     * The effects are writes through {@link IdempotentRequests#connection}: the key, the writes and
     * the stored response commit together, and a crash leaves nothing behind. The default.
     */
    TRANSACTIONAL,
    /**
     * The effects are outside the database: the key is claimed with a lease that commits at once,
     * and completed or failed after the handler. A crashed server's key is taken over when its
     * lease ({@code InboxSettings.leaseDuration}) expires; until then retries get 409. The lease is
     * not renewed, so a handler must finish within it.
     *
     * <p>Once the handler has answered with a stored status, its effect has happened, and the
     * client gets that answer even when the result cannot be recorded: recording is retried while
     * the database is unavailable, for up to {@link Builder#completionRetry} and never past the
     * lease, and if it still fails, the failure is logged at ERROR with the scope and key and
     * counted as {@link RequestOutcome#NOT_RECORDED}. The key then stays in progress until its
     * lease ends, and a retry after that runs the handler again: an answer that told the client to
     * retry would make that certain.
     */
    LEASED
  }

  private final RequestMatching matching;
  private final Protection protection;
  private final IdempotencyListener listener;

  private IdempotencyFilter(Builder b) {
    this.matching =
        new RequestMatching(
            b.methods,
            b.paths,
            b.headerName,
            b.keyRequired,
            b.scopes,
            b.maxRequestBody,
            new RequestFingerprint(b.fingerprintHeaders));
    StoredResponses responses =
        new StoredResponses(b.storedStatuses, b.replayedHeaders, b.maxStoredBody);
    Answers answers =
        new Answers(b.headerName, b.retryAfter, b.unavailableRetryAfter, b.noStoredResponse);
    ModeStrategy mode =
        b.mode == Mode.TRANSACTIONAL
            ? new TransactionalMode(b.inbox, responses, answers)
            : new LeasedMode(b.inbox, responses, answers, b.completionRetry);
    this.protection = new Protection(mode, answers, b.inFlightWait);
    this.listener = Listeners.nonThrowing(IdempotencyListener.class, b.listener);
  }

  /**
   * A builder for a filter on the inbox. In {@link Mode#TRANSACTIONAL} mode (the default) each
   * request runs as the handler of {@link Inbox#execute}, on the transaction the inbox claims its
   * key in (or joins, see {@link dev.inbox.InboxBuilder#callerTransactions}).
   */
  public static Builder builder(Inbox inbox) {
    return new Builder(inbox);
  }

  /**
   * Passes through what the filter does not decide on; otherwise reports one outcome per request to
   * the listener, with the time the filter added (the handler's excluded), once its answer is
   * decided and sent.
   */
  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request)
        || !(res instanceof HttpServletResponse response)
        || !matching.decides(request)) {
      chain.doFilter(req, res);
      return;
    }
    long start = System.nanoTime();
    RequestMatching.Match match = matching.match(request);
    if (match.passesThrough()) {
      chain.doFilter(req, res);
      return;
    }
    HandlerRuns handler = new HandlerRuns(chain, response);
    Answer answer = match.rejection();
    if (answer == null) {
      try {
        answer = protection.answer(match.request(), handler);
      } finally {
        RequestMatching.endProtection(match.request());
      }
    }
    try {
      answer.sendTo(response);
    } finally {
      long added = System.nanoTime() - start - handler.nanos();
      listener.answered(answer.outcome(), Duration.ofNanos(Math.max(0, added)));
    }
  }

  /**
   * Configures an {@link IdempotencyFilter}. Every setter checks its value at once; {@link
   * #build()} copies the configuration, so that later calls do not change a built filter.
   */
  public static final class Builder {
    private final Inbox inbox;
    private Mode mode = Mode.TRANSACTIONAL;
    private Set<String> methods = DEFAULT_METHODS;
    private Predicate<String> paths = path -> true;
    private String headerName = DEFAULT_HEADER_NAME;
    private boolean keyRequired = true;
    private ScopeResolver scopes = ScopeResolver.principal();
    private List<String> fingerprintHeaders = List.of();
    private Duration inFlightWait = DEFAULT_IN_FLIGHT_WAIT;
    private Duration retryAfter = DEFAULT_RETRY_AFTER;
    private Duration unavailableRetryAfter = DEFAULT_UNAVAILABLE_RETRY_AFTER;
    private Duration completionRetry = DEFAULT_COMPLETION_RETRY;
    private IntPredicate storedStatuses = DEFAULT_STORED_STATUSES;
    private Set<String> replayedHeaders = DEFAULT_REPLAYED_HEADERS;
    private int maxStoredBody = DEFAULT_MAX_STORED_BODY;
    private int maxRequestBody = DEFAULT_MAX_REQUEST_BODY;
    private StoredResult noStoredResponse = DEFAULT_NO_STORED_RESPONSE;
    private IdempotencyListener listener = IdempotencyListener.NOOP;

    private Builder(Inbox inbox) {
      this.inbox = Objects.requireNonNull(inbox, "inbox must not be null");
    }

    /** Defaults to {@link Mode#TRANSACTIONAL}. */
    public Builder mode(Mode mode) {
      this.mode = Objects.requireNonNull(mode, "mode must not be null");
      return this;
    }

    /** The HTTP methods the filter applies to. Defaults to POST and PATCH. */
    public Builder methods(String... methods) {
      if (methods == null || methods.length == 0) {
        throw new IllegalArgumentException(
            "methods must name at least one HTTP method, but was " + Arrays.toString(methods));
      }
      for (String method : methods) {
        if (method == null || method.isBlank()) {
          throw new IllegalArgumentException(
              "methods must not contain a blank method, but was " + Arrays.toString(methods));
        }
      }
      this.methods =
          Arrays.stream(methods)
              .map(m -> m.trim().toUpperCase(Locale.ROOT))
              .collect(Collectors.toUnmodifiableSet());
      return this;
    }

    /**
     * Which paths the filter applies to, tested on the path the container routes on: the servlet
     * path and path info, decoded and normalised, without the context path ({@code /payments} for
     * {@code /app/%70ayments;v=1} or {@code /app/a/../payments}). The fingerprint uses the same
     * path, and the raw path's {@code ;} parameters besides. A request whose path the container
     * cannot decode unambiguously gets 400 (rule {@code path-ambiguous}) for the filter's methods,
     * whatever the predicate. Defaults to every path.
     */
    public Builder paths(Predicate<String> paths) {
      this.paths = Objects.requireNonNull(paths, "paths must not be null");
      return this;
    }

    /**
     * Applies the filter to paths equal to one of the prefixes or below it: {@code "/payments"}
     * matches {@code /payments} and {@code /payments/7}, not {@code /paymentsX}.
     */
    public Builder pathPrefixes(String... prefixes) {
      if (prefixes == null || prefixes.length == 0) {
        throw new IllegalArgumentException(
            "pathPrefixes must name at least one prefix, but was " + Arrays.toString(prefixes));
      }
      List<String> list = List.of(prefixes);
      for (String prefix : list) {
        if (!prefix.startsWith("/")) {
          throw new IllegalArgumentException(
              "a path prefix must start with '/', but was '" + prefix + "'");
        }
      }
      return paths(
          path ->
              list.stream()
                  .anyMatch(
                      p ->
                          path.equals(p)
                              || path.startsWith(p.endsWith("/") ? p : p + "/")
                              || p.equals("/")));
    }

    /** The request header that carries the key. Defaults to {@code Idempotency-Key}. */
    public Builder headerName(String headerName) {
      if (headerName == null || !headerName.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
        throw new IllegalArgumentException(
            "headerName must be an HTTP header name (a token), but was " + headerName);
      }
      this.headerName = headerName;
      return this;
    }

    /**
     * Whether a request without the header is refused with 400 (the default) or passes through
     * unprotected.
     */
    public Builder keyRequired(boolean keyRequired) {
      this.keyRequired = keyRequired;
      return this;
    }

    /**
     * Whose key it is. Defaults to {@link ScopeResolver#principal()}: an anonymous request is
     * refused with 401 unless a resolver such as {@link ScopeResolver#global} is configured.
     */
    public Builder scopeResolver(ScopeResolver scopes) {
      this.scopes = Objects.requireNonNull(scopes, "scopeResolver must not be null");
      return this;
    }

    /**
     * Request headers that take part in the fingerprint, besides the method, path, query, content
     * type and body. Defaults to none.
     */
    public Builder fingerprintHeaders(String... headers) {
      this.fingerprintHeaders = List.of(headers);
      return this;
    }

    /**
     * How long a retry waits for the first request with its key before it gets 409, polling every
     * 50 ms. Defaults to 5 seconds. Where the key's earlier attempt failed, and two requests claim
     * its record again at once, the second also waits on the first's row lock, for up to the
     * inbox's {@code lockTimeout} per claim.
     */
    public Builder inFlightWait(Duration wait) {
      Objects.requireNonNull(wait, "inFlightWait must not be null");
      if (wait.isNegative()) {
        throw new IllegalArgumentException("inFlightWait must not be negative, but was " + wait);
      }
      this.inFlightWait = wait;
      return this;
    }

    /** The {@code Retry-After} of a 409, in whole seconds (at least 1). Defaults to 1 second. */
    public Builder retryAfter(Duration retryAfter) {
      Objects.requireNonNull(retryAfter, "retryAfter must not be null");
      if (retryAfter.isNegative() || retryAfter.isZero()) {
        throw new IllegalArgumentException("retryAfter must be positive, but was " + retryAfter);
      }
      this.retryAfter = retryAfter;
      return this;
    }

    /**
     * The {@code Retry-After} of a 503 for an unavailable database (unreachable, its pool
     * exhausted, the connection lost), in whole seconds (at least 1). Defaults to 5 seconds.
     */
    public Builder unavailableRetryAfter(Duration retryAfter) {
      Objects.requireNonNull(retryAfter, "unavailableRetryAfter must not be null");
      if (retryAfter.isNegative() || retryAfter.isZero()) {
        throw new IllegalArgumentException(
            "unavailableRetryAfter must be positive, but was " + retryAfter);
      }
      this.unavailableRetryAfter = retryAfter;
      return this;
    }

    /**
     * {@link Mode#LEASED} only: how long recording a handler's result is retried while the database
     * is unavailable, backing off from 50 ms to 1 s, and never past the request's lease. If it
     * still cannot be recorded, the client gets the handler's answer all the same (see {@link
     * Mode#LEASED}). Defaults to 10 seconds; zero tries once.
     */
    public Builder completionRetry(Duration completionRetry) {
      Objects.requireNonNull(completionRetry, "completionRetry must not be null");
      if (completionRetry.isNegative()) {
        throw new IllegalArgumentException(
            "completionRetry must not be negative, but was " + completionRetry);
      }
      this.completionRetry = completionRetry;
      return this;
    }

    /**
     * Which response statuses are stored and replayed; any other status rolls back the handler's
     * writes and releases the key. Defaults to {@link #DEFAULT_STORED_STATUSES}: 2xx, 301 to 303
     * and 4xx.
     */
    public Builder storedStatuses(IntPredicate storedStatuses) {
      this.storedStatuses =
          Objects.requireNonNull(storedStatuses, "storedStatuses must not be null");
      return this;
    }

    /**
     * The response headers stored and replayed (case-insensitive). Defaults to {@link
     * #DEFAULT_REPLAYED_HEADERS}. {@code Set-Cookie}, {@code Authorization} and other credential
     * headers are never stored, even when listed.
     */
    public Builder replayedHeaders(String... headers) {
      for (String header : headers) {
        Objects.requireNonNull(header, "replayedHeaders must not contain null");
      }
      this.replayedHeaders = Set.of(headers);
      return this;
    }

    /**
     * The largest response body stored for replay; a larger one is recorded by its SHA-256 only,
     * still completing the key, so that a retry never runs the handler again. Defaults to 1 MiB.
     */
    public Builder maxStoredBody(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("maxStoredBody must not be negative, but was " + bytes);
      }
      this.maxStoredBody = bytes;
      return this;
    }

    /**
     * The largest request body accepted; the body is buffered for the fingerprint, and a larger one
     * gets 413. Defaults to 1 MiB.
     */
    public Builder maxRequestBody(int bytes) {
      if (bytes < 0 || bytes == Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "maxRequestBody must be between 0 and "
                + (Integer.MAX_VALUE - 1)
                + ", but was "
                + bytes);
      }
      this.maxRequestBody = bytes;
      return this;
    }

    /**
     * The answer to a key that was completed without a stored response, as a message consumer
     * completes it when the same payment arrived over Kafka first. It is sent with {@code
     * Idempotent-Replayed: true}. Defaults to {@link #DEFAULT_NO_STORED_RESPONSE}: 200 with a JSON
     * body saying that the key was already processed.
     */
    public Builder noStoredResponse(StoredResult response) {
      this.noStoredResponse = Objects.requireNonNull(response, "noStoredResponse must not be null");
      return this;
    }

    /** Receives each request's outcome and added latency. Defaults to a no-op. */
    public Builder listener(IdempotencyListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener must not be null");
      return this;
    }

    /**
     * Publishes {@code inbox.http.requests} and {@code inbox.http.added.latency} to the registry;
     * see {@link MicrometerIdempotencyListener}. Replaces any {@link #listener}.
     */
    public Builder meterRegistry(MeterRegistry registry) {
      Objects.requireNonNull(registry, "meterRegistry must not be null");
      return listener(new MicrometerIdempotencyListener(registry));
    }

    public IdempotencyFilter build() {
      return new IdempotencyFilter(this);
    }
  }
}
