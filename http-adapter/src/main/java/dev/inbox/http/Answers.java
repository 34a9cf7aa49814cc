package dev.inbox.http;

import dev.inbox.Claim;
import dev.inbox.InboxKeys;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import dev.inbox.http.spi.RequestOutcome;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answers to a keyed request that are not its handler's own response: a replay, the 409, 422,
 * 500 and 503 problem details, and what becomes of a handler's failure. A problem answer names no
 * exception, SQL, host or port; the log gets the detail, under the filter's name.
 */
final class Answers {
  private static final Logger log = LoggerFactory.getLogger(IdempotencyFilter.class);

  private final String headerName;
  private final Duration retryAfter;
  private final Duration unavailableRetryAfter;
  private final StoredResult noStoredResponse;

  Answers(
      String headerName,
      Duration retryAfter,
      Duration unavailableRetryAfter,
      StoredResult noStoredResponse) {
    this.headerName = headerName;
    this.retryAfter = retryAfter;
    this.unavailableRetryAfter = unavailableRetryAfter;
    this.noStoredResponse = noStoredResponse;
  }

  /**
   * The answer to a request whose claim was not NEW, or empty when the key is in flight and the
   * request should wait.
   */
  Optional<Answer> existing(Claim claim) {
    return switch (claim.outcome()) {
      case DUPLICATE -> {
        StoredResult result = claim.result().orElse(noStoredResponse);
        yield Optional.of(
            new Answer(
                RequestOutcome.REPLAYED, response -> StoredResponses.replay(result, response)));
      }
      case MISMATCH ->
          Optional.of(
              problem(
                  RequestOutcome.MISMATCH,
                  "idempotency-key-mismatch",
                  headerName
                      + " "
                      + InboxKeys.describe(claim.key())
                      + " was already used with a different request (method, path, query, content"
                      + " type or body differ); use a new key for a new request"));
      case GAVE_UP ->
          Optional.of(
              problem(
                  RequestOutcome.GAVE_UP,
                  "idempotency-key-exhausted",
                  "requests with "
                      + headerName
                      + " "
                      + InboxKeys.describe(claim.key())
                      + " failed "
                      + claim.attempts()
                      + " times; use a new key"));
      case IN_PROGRESS -> Optional.empty();
      case NEW ->
          throw new IllegalStateException(
              "answering a NEW claim as an existing one indicates a bug");
    };
  }

  /** The first request with the key is still in flight after the wait: 409 with Retry-After. */
  Answer inProgress() {
    long seconds = Math.max(1, retryAfter.toSeconds());
    return new Answer(
        RequestOutcome.CONFLICT,
        response -> {
          response.setHeader("Retry-After", Long.toString(seconds));
          Problems.send(
              response,
              RequestOutcome.CONFLICT,
              "request-in-progress",
              "a request with this "
                  + headerName
                  + " is still being processed; retry after "
                  + seconds
                  + " s");
        });
  }

  /**
   * A handler that failed, its writes rolled back and its key released. Its failure goes on to the
   * container's error handling, as it would without the filter, unless it failed on the database (a
   * lost connection or server, a serialization failure, a deadlock or a lock wait past the lock
   * timeout): none of these is the request's fault and a retry may well succeed, so the client gets
   * 503 with {@code Retry-After} instead of the container's error page.
   */
  Answer handlerFailed(KeyedRequest keyed, Throwable failure) {
    return new Answer(
        RequestOutcome.RELEASED,
        response -> {
          if (failure instanceof Error error) {
            throw error;
          }
          if (response.isCommitted() || !TransientFailures.isTransient(failure)) {
            throw rethrown(failure);
          }
          response.reset();
          log.warn(
              "the handler of the request with key {} in scope {} failed on the database; nothing"
                  + " was committed, answered 503",
              InboxKeys.describe(keyed.key()),
              InboxKeys.describe(keyed.scope()),
              failure);
          if (TransientFailures.isConnectionFailure(failure)) {
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
        });
  }

  /**
   * A handler that answered, but had caught an SQL error that aborted its transaction, so that
   * nothing committed: the answer would be a lie, so the attempt counts as failed, as if the
   * handler had thrown, and the client gets 500.
   */
  Answer abortedTransaction(KeyedRequest keyed, int status, SQLException e) {
    return new Answer(
        RequestOutcome.RELEASED,
        response -> {
          log.error(
              "the handler of the request with key {} in scope {} answered {}, but an SQL error it"
                  + " caught had aborted the transaction, so nothing was committed; answered 500"
                  + " and counted a failed attempt. Roll back to a savepoint after an error the"
                  + " handler means to survive, or let the error propagate",
              InboxKeys.describe(keyed.key()),
              InboxKeys.describe(keyed.scope()),
              status,
              e);
          Problems.send(response, 500, "internal-error", internalErrorDetail());
        });
  }

  /**
   * A failure of the filter's own work: 503 with {@code Retry-After} when the database cannot be
   * reached, its pool is exhausted or the connection was lost, and 500 for anything else. A
   * response already committed cannot be answered again, so the failure goes on to the container.
   */
  Answer failure(KeyedRequest keyed, Exception e) {
    if (DatabaseFailures.isUnavailable(e)) {
      return new Answer(
          RequestOutcome.UNAVAILABLE,
          response -> {
            resetUncommitted(response, e);
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
          });
    }
    return new Answer(
        RequestOutcome.ERROR,
        response -> {
          resetUncommitted(response, e);
          log.error(
              "the request with key {} in scope {} failed in the idempotency filter; answered 500",
              InboxKeys.describe(keyed.key()),
              InboxKeys.describe(keyed.scope()),
              e);
          Problems.send(response, 500, "internal-error", internalErrorDetail());
        });
  }

  private static void resetUncommitted(HttpServletResponse response, Exception e)
      throws IOException, ServletException {
    if (response.isCommitted()) {
      throw rethrown(e);
    }
    response.reset();
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

  private String internalErrorDetail() {
    return "the request failed with an internal error, which was logged; retry with the same "
        + headerName;
  }

  private static Answer problem(RequestOutcome outcome, String rule, String detail) {
    return new Answer(outcome, response -> Problems.send(response, outcome, rule, detail));
  }

  /** A failure to throw on as it came: the ones a filter chain may throw are never wrapped. */
  private static RuntimeException rethrown(Throwable failure) throws IOException, ServletException {
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
}
