package dev.inbox.http.spi;

import java.util.Locale;
import java.util.OptionalInt;

/** How {@link dev.inbox.http.IdempotencyFilter} answered one request that it applies to. */
public enum RequestOutcome {
  /** The handler ran and its response was stored (and, in transactional mode, committed). */
  FRESH,
  /** A stored response (or the fallback for a key completed without one) was replayed. */
  REPLAYED,
  /** The first request with the key was still in flight after the wait bound: 409. */
  CONFLICT(409),
  /** The key was used before with a different request fingerprint: 422. */
  MISMATCH(422),
  /** The route requires a key and the request had none: 400. */
  MISSING_KEY(400),
  /** The key was repeated or broke a rule: 400. */
  INVALID_KEY(400),
  /** The container could not decode the request's path unambiguously: 400. */
  INVALID_PATH(400),
  /** No scope could be resolved for the request: 401. */
  NO_SCOPE(401),
  /** The request body was larger than the limit: 413. */
  TOO_LARGE(413),
  /**
   * The request body is {@code multipart/*}, whose parts the filter could not hand on to the
   * application once it has read them for the fingerprint: 415, before anything was recorded.
   */
  UNSUPPORTED_MEDIA_TYPE(415),
  /**
   * Leased mode: the handler ran and its answer was sent, but its result could not be recorded (the
   * database stayed unavailable for the completion's retries, or the lease was taken over). The key
   * stays in progress until its lease ends, and a retry after that runs the handler again.
   */
  NOT_RECORDED,
  /** The handler failed (exception or a status that is not stored); the key was released. */
  RELEASED,
  /** The key failed {@code maxAttempts} times and is refused: 422. */
  GAVE_UP(422),
  /** The database was unreachable, its pool exhausted or the connection lost: 503. */
  UNAVAILABLE(503),
  /** The filter's own work failed otherwise: 500. */
  ERROR(500);

  private static final int NO_PROBLEM = 0;

  private final int problemStatus;

  RequestOutcome() {
    this(NO_PROBLEM);
  }

  RequestOutcome(int problemStatus) {
    this.problemStatus = problemStatus;
  }

  /**
   * The status of the problem the filter always answers with this outcome, such as 415 for {@link
   * #UNSUPPORTED_MEDIA_TYPE}: the filter sends it, and a description of the API (such as the
   * starter's OpenAPI) documents it from here. Empty for an outcome whose answer is the handler's
   * own or depends on how it failed ({@link #FRESH}, {@link #REPLAYED}, {@link #NOT_RECORDED},
   * {@link #RELEASED}).
   */
  public OptionalInt problemStatus() {
    return problemStatus == NO_PROBLEM ? OptionalInt.empty() : OptionalInt.of(problemStatus);
  }

  /** The lower-case name used as a metrics tag, such as {@code missing_key}. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
