package dev.inbox.http;

import dev.inbox.Claim;
import dev.inbox.Execution;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxDatabaseException;
import dev.inbox.InboxKeys;
import dev.inbox.LeaseLostException;
import dev.inbox.LeaseToken;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import dev.inbox.http.micrometer.MicrometerIdempotencyListener;
import dev.inbox.http.spi.IdempotencyListener;
import dev.inbox.http.spi.RequestOutcome;
import dev.inbox.internal.Fingerprints;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * IdempotencyFilter filter = IdempotencyFilter.builder(inbox, dataSource)
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

  /** Never stored or replayed, whatever the allow-list says. */
  private static final Set<String> CREDENTIAL_HEADERS =
      Set.of(
          "set-cookie",
          "set-cookie2",
          "authorization",
          "proxy-authorization",
          "www-authenticate",
          "proxy-authenticate",
          "cookie");

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

  /** PostgreSQL's in_failed_sql_transaction: an earlier error aborted the transaction. */
  private static final String IN_FAILED_SQL_TRANSACTION = "25P02";

  private static final long POLL_MILLIS = 50;
  private static final long MAX_COMPLETION_BACKOFF_MILLIS = 1000;
  private static final Logger log = LoggerFactory.getLogger(IdempotencyFilter.class);

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

  private final Inbox inbox;
  private final DataSource dataSource;
  private final Mode mode;
  private final Set<String> methods;
  private final Predicate<String> paths;
  private final String headerName;
  private final boolean keyRequired;
  private final ScopeResolver scopes;
  private final List<String> fingerprintHeaders;
  private final Duration inFlightWait;
  private final Duration retryAfter;
  private final Duration unavailableRetryAfter;
  private final Duration completionRetry;
  private final IntPredicate storedStatuses;
  private final Set<String> replayedHeaders;
  private final int maxStoredBody;
  private final int maxRequestBody;
  private final StoredResult noStoredResponse;
  private final IdempotencyListener listener;

  private IdempotencyFilter(Builder b) {
    this.inbox = b.inbox;
    this.dataSource = b.dataSource;
    this.mode = b.mode;
    this.methods = Set.copyOf(b.methods);
    this.paths = b.paths;
    this.headerName = b.headerName;
    this.keyRequired = b.keyRequired;
    this.scopes = b.scopes;
    this.fingerprintHeaders = List.copyOf(b.fingerprintHeaders);
    this.inFlightWait = b.inFlightWait;
    this.retryAfter = b.retryAfter;
    this.unavailableRetryAfter = b.unavailableRetryAfter;
    this.completionRetry = b.completionRetry;
    this.storedStatuses = b.storedStatuses;
    TreeSet<String> replayed = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    replayed.addAll(b.replayedHeaders);
    this.replayedHeaders = Collections.unmodifiableSet(replayed);
    this.maxStoredBody = b.maxStoredBody;
    this.maxRequestBody = b.maxRequestBody;
    this.noStoredResponse = b.noStoredResponse;
    this.listener = b.listener;
  }

  /**
   * A builder for a filter on the inbox. {@link Mode#TRANSACTIONAL} mode (the default) also needs
   * the inbox's data source: set it with {@link Builder#dataSource}, or use {@link #builder(Inbox,
   * DataSource)}.
   */
  public static Builder builder(Inbox inbox) {
    return new Builder(inbox);
  }

  /**
   * A builder for a filter on the inbox.
   *
   * @param inbox the inbox shared with the consumers
   * @param dataSource the inbox's data source (the one it was built with), from which the filter
   *     opens each request's transaction in {@link Mode#TRANSACTIONAL} mode
   */
  public static Builder builder(Inbox inbox, DataSource dataSource) {
    return new Builder(inbox).dataSource(dataSource);
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request)
        || !(res instanceof HttpServletResponse response)
        || !methods.contains(request.getMethod().toUpperCase(Locale.ROOT))
        || !PROTECTED_DISPATCHES.contains(request.getDispatcherType())
        || request.getAttribute(PROTECTING_ATTRIBUTE) != null) {
      chain.doFilter(req, res);
      return;
    }
    Exchange exchange = new Exchange(System.nanoTime());
    try {
      String path = RoutedPath.of(request);
      if (path == null) {
        exchange.outcome = RequestOutcome.INVALID_PATH;
        rejectUnread(
            response,
            400,
            "path-ambiguous",
            "the request path "
                + InboxKeys.describe(request.getRequestURI())
                + " cannot be decoded unambiguously (an encoded '/' or dot segment, an empty"
                + " segment, or a parameter on a dot segment); send the path in its plain form");
        return;
      }
      if (!paths.test(path)) {
        chain.doFilter(req, res);
        return;
      }
      filter(request, path, response, chain, exchange);
    } finally {
      if (exchange.outcome != null) {
        report(exchange);
      }
    }
  }

  /** One request on its way through the filter: how it ended and how long the handler took. */
  private static final class Exchange {
    final long startNanos;
    long handlerNanos;
    RequestOutcome outcome;

    /** What the handler threw, told apart from the filter's own failures. */
    Throwable handlerFailure;

    Exchange(long startNanos) {
      this.startNanos = startNanos;
    }
  }

  private void report(Exchange exchange) {
    long added = System.nanoTime() - exchange.startNanos - exchange.handlerNanos;
    try {
      listener.answered(exchange.outcome, Duration.ofNanos(Math.max(0, added)));
    } catch (RuntimeException e) {
      log.warn("IdempotencyListener threw; it must not", e);
    }
  }

  private void filter(
      HttpServletRequest request,
      String path,
      HttpServletResponse response,
      FilterChain chain,
      Exchange exchange)
      throws IOException, ServletException {
    List<String> values = Collections.list(request.getHeaders(headerName));
    if (values.isEmpty()) {
      if (!keyRequired) {
        chain.doFilter(request, response);
        return;
      }
      exchange.outcome = RequestOutcome.MISSING_KEY;
      rejectUnread(
          response,
          400,
          "idempotency-key-missing",
          "this endpoint requires an " + headerName + " header");
      return;
    }
    if (values.size() > 1) {
      exchange.outcome = RequestOutcome.INVALID_KEY;
      rejectUnread(
          response,
          400,
          "idempotency-key-repeated",
          "send exactly one " + headerName + " header, not " + values.size());
      return;
    }
    String key;
    try {
      key = IdempotencyKeyHeader.parse(values.get(0));
    } catch (IllegalArgumentException e) {
      exchange.outcome = RequestOutcome.INVALID_KEY;
      String rule =
          e instanceof IdempotencyKeyHeader.NotAsciiException
              ? "idempotency-key-not-ascii"
              : "idempotency-key-invalid";
      rejectUnread(response, 400, rule, headerName + " " + e.getMessage());
      return;
    }
    String scope = scopes.scopeOf(request);
    if (scope == null || InboxKeys.brokenRule(scope) != null) {
      exchange.outcome = RequestOutcome.NO_SCOPE;
      rejectUnread(
          response,
          401,
          "scope-unresolved",
          "the request names no known client or tenant to own its "
              + headerName
              + "; authenticate or send valid credentials");
      return;
    }
    BufferedRequest buffered = BufferedRequest.read(request, maxRequestBody);
    if (buffered == null) {
      exchange.outcome = RequestOutcome.TOO_LARGE;
      rejectUnread(
          response,
          413,
          "request-body-too-large",
          "the request body is larger than " + maxRequestBody + " bytes");
      return;
    }
    buffered.setAttribute(IdempotentRequests.SCOPE_ATTRIBUTE, scope);
    buffered.setAttribute(IdempotentRequests.KEY_ATTRIBUTE, key);
    KeyedRequest keyed = new KeyedRequest(buffered, scope, key, fingerprint(buffered, path));
    buffered.setAttribute(PROTECTING_ATTRIBUTE, Boolean.TRUE);
    try {
      handle(keyed, response, chain, exchange);
    } catch (IOException | ServletException | RuntimeException e) {
      // The handler's own exceptions go to the container's error handling, as they would without
      // the filter, unless the database failed it in passing; the filter's failures (the
      // database's, mostly) are answered here. An IOException of the filter's own is the client's
      // connection failing, with nobody left to answer.
      if (response.isCommitted()) {
        throw e;
      }
      if (e == exchange.handlerFailure) {
        if (!TransientFailures.isTransient(e)) {
          throw e;
        }
        answerTransientHandlerFailure(keyed, response, e);
        return;
      }
      if (e instanceof IOException) {
        throw e;
      }
      answerFailure(keyed, response, e, exchange);
    } finally {
      buffered.removeAttribute(PROTECTING_ATTRIBUTE);
    }
  }

  /**
   * Answers a handler that failed on the database: a lost connection or server, a serialization
   * failure, a deadlock or a lock wait past the lock timeout. None of them is the request's fault,
   * and the client's retry may well succeed, so it gets 503 with {@code Retry-After}, and problem
   * details that name no exception or SQL, instead of the container's error page.
   */
  private void answerTransientHandlerFailure(
      KeyedRequest keyed, HttpServletResponse response, Exception e) throws IOException {
    response.reset();
    log.warn(
        "the handler of the request with key {} in scope {} failed on the database; nothing was"
            + " committed, answered 503",
        InboxKeys.describe(keyed.key()),
        InboxKeys.describe(keyed.scope()),
        e);
    if (TransientFailures.isConnectionFailure(e)) {
      sendUnavailable(
          response,
          "database-unavailable",
          "the database behind this service is unavailable; nothing was committed",
          unavailableRetryAfter);
    } else {
      sendUnavailable(
          response,
          "transaction-conflict",
          "the request conflicted with another one running at the same time; nothing was"
              + " committed",
          retryAfter);
    }
  }

  /** 503 with {@code Retry-After}, in whole seconds (at least 1). */
  private void sendUnavailable(
      HttpServletResponse response, String rule, String what, Duration retryAfter)
      throws IOException {
    long seconds = Math.max(1, retryAfter.toSeconds());
    response.setHeader("Retry-After", Long.toString(seconds));
    Problems.send(
        response, 503, rule, what + "; retry after " + seconds + " s with the same " + headerName);
  }

  /**
   * Answers a failure of the filter's own work with problem details that name no exception, SQL,
   * host or port, and logs the detail: 503 with {@code Retry-After} when the database cannot be
   * reached, its pool is exhausted or the connection was lost, and 500 for anything else.
   */
  private void answerFailure(
      KeyedRequest keyed, HttpServletResponse response, Exception e, Exchange exchange)
      throws IOException {
    response.reset();
    if (DatabaseFailures.isUnavailable(e)) {
      exchange.outcome = RequestOutcome.UNAVAILABLE;
      log.warn(
          "the database is unavailable for the request with key {} in scope {}; answered 503",
          InboxKeys.describe(keyed.key()),
          InboxKeys.describe(keyed.scope()),
          e);
      sendUnavailable(
          response,
          "database-unavailable",
          "the database behind this service is unavailable",
          unavailableRetryAfter);
    } else {
      exchange.outcome = RequestOutcome.ERROR;
      log.error(
          "the request with key {} in scope {} failed in the idempotency filter; answered 500",
          InboxKeys.describe(keyed.key()),
          InboxKeys.describe(keyed.scope()),
          e);
      Problems.send(response, 500, "internal-error", internalErrorDetail());
    }
  }

  private String internalErrorDetail() {
    return "the request failed with an internal error, which was logged; retry with the same "
        + headerName;
  }

  /**
   * Rejects a request whose body was never read. The response is committed before the container
   * could drain the body, so the container closes the connection; saying so in {@code Connection:
   * close} stops clients from reusing a connection that is about to go away.
   */
  private static void rejectUnread(
      HttpServletResponse response, int status, String rule, String detail) throws IOException {
    response.setHeader("Connection", "close");
    Problems.send(response, status, rule, detail);
  }

  /** A request that passed the checks, with the body it was fingerprinted on. */
  private record KeyedRequest(
      BufferedRequest request, String scope, String key, byte[] fingerprint) {}

  /**
   * Claims until a claim answers or the wait bound passes. A request whose key is in flight waits
   * for the first one (transactional mode: on the database, for at most the inbox's lockTimeout;
   * leased mode: not at all, its lease answers at once) and then polls.
   */
  private void handle(
      KeyedRequest keyed, HttpServletResponse response, FilterChain chain, Exchange exchange)
      throws IOException, ServletException {
    // No lookup first: the claim answers a settled key from its own read in the same round trip,
    // with no lock or write, so a separate read would only slow down first requests.
    long deadline = System.nanoTime() + inFlightWait.toNanos();
    while (true) {
      boolean answered =
          mode == Mode.TRANSACTIONAL
              ? inTransaction(keyed, response, chain, exchange)
              : withLease(keyed, response, chain, exchange);
      if (answered) {
        return;
      }
      if (System.nanoTime() - deadline >= 0) {
        exchange.outcome = RequestOutcome.CONFLICT;
        response.setHeader("Retry-After", Long.toString(Math.max(1, retryAfter.toSeconds())));
        Problems.send(
            response,
            409,
            "request-in-progress",
            "a request with this "
                + headerName
                + " is still being processed; retry after "
                + Math.max(1, retryAfter.toSeconds())
                + " s");
        return;
      }
      try {
        Thread.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ServletException(
            "interrupted while waiting for the first request with key "
                + InboxKeys.describe(keyed.key()),
            e);
      }
    }
  }

  /**
   * Transactional mode: the request runs as the handler of {@link Inbox#execute}, on the
   * transaction the inbox claims its key in, so that the handler's writes, the key and the stored
   * response commit together. A response whose status is not stored fails the attempt instead: its
   * writes roll back and the inbox counts it.
   *
   * @return false when another request holds the key: wait and try again
   */
  private boolean inTransaction(
      KeyedRequest keyed, HttpServletResponse response, FilterChain chain, Exchange exchange)
      throws IOException, ServletException {
    // The inbox may run the handler again (a consumer recorded the key while it ran, and nothing
    // of that run committed), so each run buffers its own response.
    BufferedResponse[] answer = new BufferedResponse[1];
    Execution run;
    try {
      run =
          inbox.execute(
              keyed.scope(),
              keyed.key(),
              keyed.fingerprint(),
              tx -> {
                answer[0] = new BufferedResponse(response);
                return runInTransaction(tx, keyed, answer[0], chain, exchange);
              });
    } catch (HandlerFailedException e) {
      exchange.outcome = RequestOutcome.RELEASED;
      return answerFailedAttempt(keyed, e.getCause(), answer[0], response, exchange);
    } catch (InboxDatabaseException e) {
      if (exchange.handlerFailure != null && TransientFailures.isTransient(e)) {
        // A deadlock, serialization failure or lost connection says nothing about the request:
        // the key stays as it was, and the attempt is not counted towards maxAttempts.
        exchange.outcome = RequestOutcome.RELEASED;
        throw handlerFailure(exchange.handlerFailure);
      }
      throw e;
    }
    if (!run.executed()) {
      return answerExisting(run.claim(), response, exchange);
    }
    exchange.outcome = RequestOutcome.FRESH;
    answer[0].writeTo(response);
    return true;
  }

  private StoredResult runInTransaction(
      Connection tx,
      KeyedRequest keyed,
      BufferedResponse buffered,
      FilterChain chain,
      Exchange exchange)
      throws IOException, ServletException, UnstoredAnswer, HandlerError {
    BufferedRequest request = keyed.request();
    request.setAttribute(IdempotentRequests.CONNECTION_ATTRIBUTE, GuardedConnection.wrap(tx));
    try {
      runChain(request, buffered, chain, exchange);
    } catch (Error e) {
      // An Error (a StackOverflowError, say) fails the attempt like any exception.
      throw new HandlerError(e);
    } finally {
      request.removeAttribute(IdempotentRequests.CONNECTION_ATTRIBUTE);
    }
    int status = buffered.getStatus();
    if (!storedStatuses.test(status)) {
      throw new UnstoredAnswer(status);
    }
    return stored(buffered);
  }

  /**
   * Answers a request whose attempt failed and was counted: its writes were rolled back.
   *
   * @return true: the request is answered, or its handler's failure thrown on
   */
  private boolean answerFailedAttempt(
      KeyedRequest keyed,
      Throwable cause,
      BufferedResponse answer,
      HttpServletResponse response,
      Exchange exchange)
      throws IOException, ServletException {
    if (cause instanceof UnstoredAnswer) {
      answer.writeTo(response);
      return true;
    }
    if (cause instanceof HandlerError error) {
      throw error.error;
    }
    if (exchange.handlerFailure == null
        && cause instanceof SQLException e
        && IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
      // Nothing committed, so the answer would be a lie; the handler failed, as if it had thrown.
      log.error(
          "the handler of the request with key {} in scope {} answered {}, but an SQL error it"
              + " caught had aborted the transaction, so nothing was committed; answered 500 and"
              + " counted a failed attempt. Roll back to a savepoint after an error the handler"
              + " means to survive, or let the error propagate",
          InboxKeys.describe(keyed.key()),
          InboxKeys.describe(keyed.scope()),
          answer.getStatus(),
          e);
      Problems.send(response, 500, "internal-error", internalErrorDetail());
      return true;
    }
    throw handlerFailure(cause);
  }

  /** A handler's failure, to throw on as it came. */
  private static RuntimeException handlerFailure(Throwable failure)
      throws IOException, ServletException {
    if (failure instanceof IOException e) {
      throw e;
    }
    if (failure instanceof ServletException e) {
      throw e;
    }
    if (failure instanceof RuntimeException e) {
      return e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    throw new ServletException(failure);
  }

  /** A response whose status is not stored: the attempt fails, and the response is sent as is. */
  private static final class UnstoredAnswer extends Exception {
    private static final long serialVersionUID = 1L;

    UnstoredAnswer(int status) {
      super("the handler answered " + status, null, false, false);
    }

    @Override
    public String toString() {
      return getMessage();
    }
  }

  /** An Error thrown by the handler, carried through the inbox as a failed attempt. */
  private static final class HandlerError extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Error error;

    HandlerError(Error error) {
      super(error.toString(), error, false, false);
      this.error = error;
    }

    @Override
    public String toString() {
      return "the handler threw " + error;
    }
  }

  /** Leased mode: the claim commits at once; the result or failure is recorded after the run. */
  private boolean withLease(
      KeyedRequest keyed, HttpServletResponse response, FilterChain chain, Exchange exchange)
      throws IOException, ServletException {
    // The lease starts in the claim's transaction, so it ends no earlier than this.
    long leaseEnd = System.nanoTime() + inbox.settings().leaseDuration().toNanos();
    Claim claim = inbox.leases().claim(keyed.scope(), keyed.key(), keyed.fingerprint());
    if (!claim.isNew()) {
      return answerExisting(claim, response, exchange);
    }
    LeaseToken lease =
        claim
            .lease()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "a NEW leased claim without a lease token indicates a bug"));
    BufferedResponse buffered = new BufferedResponse(response);
    try {
      runChain(keyed.request(), buffered, chain, exchange);
    } catch (Throwable e) {
      // An Error (a StackOverflowError, say) fails the lease like any exception, rather than
      // holding the key until the lease ends.
      exchange.outcome = RequestOutcome.RELEASED;
      try {
        inbox.leases().fail(lease, "the handler threw " + e);
      } catch (RuntimeException failing) {
        failing.addSuppressed(e);
        throw failing;
      }
      throw e;
    }
    int status = buffered.getStatus();
    if (storedStatuses.test(status)) {
      exchange.outcome =
          completeLease(lease, stored(buffered), leaseEnd)
              ? RequestOutcome.FRESH
              : RequestOutcome.NOT_RECORDED;
    } else {
      exchange.outcome = RequestOutcome.RELEASED;
      inbox.leases().fail(lease, "the handler answered " + status);
    }
    buffered.writeTo(response);
    return true;
  }

  /**
   * Records a leased request's result, retrying with backoff while the database is unavailable, for
   * at most {@code completionRetry} and never past the lease, after which another request may own
   * the key. The handler's effect has happened either way, so its answer is sent even when this
   * fails: a 503 would send the client back, and its retry would run the effect again once the
   * lease ends.
   *
   * @return false when the result could not be recorded
   */
  private boolean completeLease(LeaseToken lease, StoredResult result, long leaseEnd) {
    long deadline = System.nanoTime() + completionRetry.toNanos();
    if (leaseEnd - deadline < 0) {
      deadline = leaseEnd;
    }
    long backoffMillis = POLL_MILLIS;
    while (true) {
      try {
        inbox.leases().complete(lease, result);
        return true;
      } catch (LeaseLostException e) {
        logNotRecorded(
            lease,
            "the handler outlasted its lease, which another request took over and may run the"
                + " handler again; its answer was sent",
            e);
        return false;
      } catch (RuntimeException e) {
        boolean retryable = DatabaseFailures.isUnavailable(e) || TransientFailures.isTransient(e);
        if (!retryable
            || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMillis) - deadline >= 0
            || !pause(backoffMillis)) {
          logNotRecorded(
              lease,
              "the handler ran and its answer was sent, but the key stays in progress until its"
                  + " lease ends, and a retry after that would run it again",
              e);
          return false;
        }
        backoffMillis = Math.min(backoffMillis * 2, MAX_COMPLETION_BACKOFF_MILLIS);
      }
    }
  }

  private static void logNotRecorded(LeaseToken lease, String consequence, Exception e) {
    log.error(
        "the result of key {} in scope {} could not be recorded: {}",
        InboxKeys.describe(lease.key()),
        InboxKeys.describe(lease.scope()),
        consequence,
        e);
  }

  /** Sleeps; false when interrupted (the flag restored). */
  private static boolean pause(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static void runChain(
      HttpServletRequest request, BufferedResponse response, FilterChain chain, Exchange exchange)
      throws IOException, ServletException {
    long start = System.nanoTime();
    try {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      exchange.handlerFailure = e;
      throw e;
    } finally {
      exchange.handlerNanos += System.nanoTime() - start;
    }
    if (request.isAsyncStarted()) {
      // The handler goes on in another thread, so neither its response nor its writes are known
      // yet: storing what the chain returned with would replay an empty answer forever. The client
      // gets a 500 now, and ending the async cycle keeps the late answer, whose writes are rolled
      // back, from reaching it.
      String detail =
          "the handler started asynchronous processing (startAsync), which IdempotencyFilter does"
              + " not support: the response must be complete when the filter chain returns;"
              + " nothing was recorded or committed";
      Problems.send(
          (HttpServletResponse) response.getResponse(), 500, "async-not-supported", detail);
      request.getAsyncContext().complete();
      ServletException failure = new ServletException(detail);
      exchange.handlerFailure = failure;
      throw failure;
    }
  }

  /**
   * Answers a request whose claim was not NEW.
   *
   * @return false when the key is in flight and the caller should wait
   */
  private boolean answerExisting(Claim claim, HttpServletResponse response, Exchange exchange)
      throws IOException {
    switch (claim.outcome()) {
      case DUPLICATE -> {
        exchange.outcome = RequestOutcome.REPLAYED;
        replay(claim.result().orElse(noStoredResponse), response);
        return true;
      }
      case MISMATCH -> {
        exchange.outcome = RequestOutcome.MISMATCH;
        Problems.send(
            response,
            422,
            "idempotency-key-mismatch",
            headerName
                + " "
                + InboxKeys.describe(claim.key())
                + " was already used with a different request (method, path, query, content"
                + " type or body differ); use a new key for a new request");
        return true;
      }
      case GAVE_UP -> {
        exchange.outcome = RequestOutcome.GAVE_UP;
        Problems.send(
            response,
            422,
            "idempotency-key-exhausted",
            "requests with "
                + headerName
                + " "
                + InboxKeys.describe(claim.key())
                + " failed "
                + claim.attempts()
                + " times; use a new key");
        return true;
      }
      case IN_PROGRESS -> {
        return false;
      }
      case NEW ->
          throw new IllegalStateException("answerExisting called with a NEW claim indicates a bug");
    }
    throw new IllegalStateException("unknown claim outcome " + claim.outcome());
  }

  private void replay(StoredResult result, HttpServletResponse response) throws IOException {
    response.setStatus(result.status());
    result.headers().forEach((name, values) -> values.forEach(v -> response.addHeader(name, v)));
    response.setHeader(REPLAYED_HEADER, "true");
    byte[] body;
    if (result.bodyStored()) {
      body = result.body().orElseThrow();
    } else {
      response.setHeader(BODY_STORED_HEADER, "false");
      body = new byte[0];
    }
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  private StoredResult stored(BufferedResponse buffered) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    buffered
        .headers()
        .forEach(
            (name, values) -> {
              if (replayedHeaders.contains(name)
                  && !CREDENTIAL_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
                headers.put(name, values);
              }
            });
    byte[] body = buffered.body();
    return body.length > maxStoredBody
        ? StoredResult.withoutBody(buffered.getStatus(), headers, Fingerprints.sha256(body))
        : StoredResult.of(buffered.getStatus(), headers, body);
  }

  /**
   * The path is the one the container routes on, behind the context's own path, followed by the raw
   * path's {@code ;} parameters when it has any: the request URI exactly when the client sent the
   * path in its plain form, so that such requests keep the fingerprints they had when the raw
   * request URI was used.
   */
  private byte[] fingerprint(BufferedRequest request, String path) {
    MessageDigest digest = Fingerprints.newDigest();
    update(digest, request.getMethod().toUpperCase(Locale.ROOT));
    update(
        digest,
        fingerprintPath(
            request.getServletContext().getContextPath() + path, RoutedPath.parameters(request)));
    update(digest, Objects.toString(request.getQueryString(), ""));
    update(digest, Objects.toString(request.getContentType(), ""));
    for (String header : fingerprintHeaders) {
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
  private static String fingerprintPath(String path, String parameters) {
    String escaped =
        path.indexOf('%') < 0 && path.indexOf(';') < 0
            ? path
            : path.replace("%", "%25").replace(";", "%3B");
    return parameters.isEmpty() ? escaped : escaped + ";" + parameters;
  }

  // Each part ends with a zero byte, so that no two different requests feed the same bytes.
  private static void update(MessageDigest digest, String part) {
    digest.update(part.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) 0);
  }

  private static void rollbackQuietly(Connection tx) {
    try {
      tx.rollback();
    } catch (SQLException e) {
      log.debug("rollback failed; the connection's transaction is lost anyway", e);
    }
  }

  /**
   * Configures an {@link IdempotencyFilter}. Every setter checks its value at once; {@link
   * #build()} copies the configuration, so that later calls do not change a built filter.
   */
  public static final class Builder {
    private final Inbox inbox;
    private DataSource dataSource;
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

    /**
     * The inbox's data source, from which each request's transaction is opened. Required in {@link
     * Mode#TRANSACTIONAL} mode; it must reach the same database and schema as the inbox.
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
      return this;
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

    /**
     * @throws IllegalStateException when transactional mode has no data source
     */
    public IdempotencyFilter build() {
      if (mode == Mode.TRANSACTIONAL && dataSource == null) {
        throw new IllegalStateException(
            "TRANSACTIONAL mode needs the inbox's DataSource to open each request's transaction:"
                + " call dataSource(...) or use IdempotencyFilter.builder(inbox, dataSource)");
      }
      return new IdempotencyFilter(this);
    }
  }
}
