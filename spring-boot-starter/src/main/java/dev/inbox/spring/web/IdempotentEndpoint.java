package dev.inbox.spring.web;

import dev.inbox.InboxKeys;
import dev.inbox.TransientFailures;
import dev.inbox.http.IdempotencyFilter;
import dev.inbox.http.IdempotentRequests;
import dev.inbox.http.spi.RequestOutcome;
import dev.inbox.spi.CallerTransactions;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * One {@link Idempotent} handler method: the HTTP adapter's filter configured for it, run inside a
 * transaction begun with the method's {@code @Transactional} definition. The inbox joins that
 * transaction (through the application's {@link CallerTransactions}), so that the claim, the
 * method's writes (its {@code @Transactional} joins too) and the stored response are one unit.
 *
 * <p>The transaction commits only when the filter ran the method and recorded its answer ({@code
 * FRESH}); every other outcome rolls it back, since it holds nothing to keep (a replay, a
 * rejection) or writes that must not stay (a failed or unstored answer, whose attempt the inbox
 * counted on a connection of its own). The answer is held back until the commit: a client never
 * sees a success that did not commit.
 */
final class IdempotentEndpoint {
  private static final Logger log = LoggerFactory.getLogger(IdempotentEndpoint.class);

  /**
   * The outcomes the filter always answers with a problem of its own, rendered again as a Spring
   * ProblemDetail. A RELEASED request is left as it is: its answer may be the method's own.
   */
  private static final Set<RequestOutcome> FILTER_PROBLEMS =
      EnumSet.of(
          RequestOutcome.CONFLICT,
          RequestOutcome.MISMATCH,
          RequestOutcome.MISSING_KEY,
          RequestOutcome.INVALID_KEY,
          RequestOutcome.INVALID_PATH,
          RequestOutcome.NO_SCOPE,
          RequestOutcome.TOO_LARGE,
          RequestOutcome.UNSUPPORTED_MEDIA_TYPE,
          RequestOutcome.GAVE_UP,
          RequestOutcome.UNAVAILABLE,
          RequestOutcome.ERROR);

  private final String name;
  private final IdempotencyFilter filter;
  private final boolean keyRequired;
  private final String scopeResolver;
  private final PlatformTransactionManager transactions;
  private final TransactionDefinition definition;
  private final CallerTransactions callerTransactions;
  private final OutcomeRecorder outcomes;
  private final ProblemAnswers problems;
  private final HandlerMethod handler;
  private final long retryAfterSeconds;

  IdempotentEndpoint(
      String name,
      IdempotencyFilter filter,
      boolean keyRequired,
      String scopeResolver,
      PlatformTransactionManager transactions,
      TransactionDefinition definition,
      CallerTransactions callerTransactions,
      OutcomeRecorder outcomes,
      ProblemAnswers problems,
      HandlerMethod handler,
      Duration retryAfter) {
    this.name = name;
    this.filter = filter;
    this.keyRequired = keyRequired;
    this.scopeResolver = scopeResolver;
    this.transactions = transactions;
    this.definition = definition;
    this.callerTransactions = callerTransactions;
    this.outcomes = outcomes;
    this.problems = problems;
    this.handler = handler;
    this.retryAfterSeconds = Math.max(1, retryAfter.toSeconds());
  }

  boolean keyRequired() {
    return keyRequired;
  }

  /** The bean name of the endpoint's scope resolver, or empty for the principal's scope. */
  String scopeResolver() {
    return scopeResolver;
  }

  void handle(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!keyRequired && request.getHeader(IdempotencyFilter.DEFAULT_HEADER_NAME) == null) {
      // Unprotected, as if the method were not annotated: its own @Transactional decides.
      chain.doFilter(request, response);
      return;
    }
    ContentCachingResponseWrapper held = new ContentCachingResponseWrapper(response);
    TransactionStatus tx = transactions.getTransaction(definition);
    outcomes.start();
    RequestOutcome outcome;
    try {
      requireInboxJoins(tx);
      filter.doFilter(request, held, (req, res) -> runAndFlush(chain, req, res, tx));
      outcome = outcomes.finish();
    } catch (IOException | ServletException | RuntimeException | Error e) {
      outcomes.finish();
      rollbackAfter(tx, e);
      throw e;
    }
    end(tx, outcome, request, held);
    if (outcome != null && FILTER_PROBLEMS.contains(outcome)) {
      problems.rerender(request, held, handler);
    }
    held.copyBodyToResponse();
  }

  /**
   * Runs the handler and flushes its JPA writes while the inbox still runs it, so that a flush
   * failure is the handler's failure (rolled back, counted) and never a failure of the commit after
   * its answer was recorded.
   */
  private static void runAndFlush(
      FilterChain chain,
      jakarta.servlet.ServletRequest request,
      jakarta.servlet.ServletResponse response,
      TransactionStatus tx)
      throws IOException, ServletException {
    chain.doFilter(request, response);
    if (!request.isAsyncStarted()) {
      tx.flush();
    }
  }

  /** The inbox must claim on this very transaction, or the writes would commit without the key. */
  private void requireInboxJoins(TransactionStatus tx) {
    try {
      if (callerTransactions.current() != null) {
        return;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not read the connection of the transaction of @Idempotent " + name, e);
    }
    throw new IllegalStateException(
        "the transaction of @Idempotent "
            + name
            + " (transaction manager "
            + transactions.getClass().getName()
            + ", new transaction: "
            + tx.isNewTransaction()
            + ") holds no connection of the inbox's DataSource, so its writes could not commit"
            + " with its Idempotency-Key: use a DataSourceTransactionManager or"
            + " JpaTransactionManager on the inbox's DataSource");
  }

  private void end(
      TransactionStatus tx,
      RequestOutcome outcome,
      HttpServletRequest request,
      ContentCachingResponseWrapper held)
      throws IOException {
    if (outcome != RequestOutcome.FRESH && outcome != null) {
      rollbackQuietly(tx);
      return;
    }
    if (tx.isRollbackOnly()) {
      rollbackQuietly(tx);
      if (held.getStatus() < 400) {
        // The method answered success, but something it called marked the transaction rollback-
        // only: nothing committed, so that answer would be a lie.
        log.error(
            "@Idempotent {} answered {} for key {}, but its transaction was marked rollback-only;"
                + " rolled back and answered 500",
            name,
            held.getStatus(),
            describedKey(request));
        held.reset();
        problems.send(
            request,
            held,
            handler,
            HttpStatus.INTERNAL_SERVER_ERROR,
            "transaction-rolled-back",
            "the request's transaction was marked rollback-only, so nothing was committed; retry"
                + " with the same Idempotency-Key");
      }
      return;
    }
    try {
      transactions.commit(tx);
    } catch (RuntimeException e) {
      // Spring rolled back after a failed commit; if the commit itself was lost on the way, the
      // key committed with the writes, and a retry with it is answered from the record.
      boolean unavailable = TransientFailures.isTransient(e);
      log.warn(
          "the transaction of @Idempotent {} for key {} failed to commit; answered {}",
          name,
          describedKey(request),
          unavailable ? 503 : 500,
          e);
      held.reset();
      if (unavailable) {
        held.setHeader("Retry-After", Long.toString(retryAfterSeconds));
      }
      problems.send(
          request,
          held,
          handler,
          unavailable ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.INTERNAL_SERVER_ERROR,
          "commit-failed",
          "the request's transaction could not be committed; retry with the same"
              + " Idempotency-Key, which runs it at most once");
    }
  }

  private static String describedKey(HttpServletRequest request) {
    return IdempotentRequests.key(request).map(InboxKeys::describe).orElse("(none)");
  }

  private void rollbackAfter(TransactionStatus tx, Throwable cause) {
    try {
      if (!tx.isCompleted()) {
        transactions.rollback(tx);
      }
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
    }
  }

  private void rollbackQuietly(TransactionStatus tx) {
    try {
      if (!tx.isCompleted()) {
        transactions.rollback(tx);
      }
    } catch (RuntimeException e) {
      // Nothing of the request is kept either way; the answer already decided stands.
      log.warn("rolling back the transaction of @Idempotent {} failed", name, e);
    }
  }
}
