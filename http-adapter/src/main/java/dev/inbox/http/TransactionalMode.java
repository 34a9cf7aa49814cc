package dev.inbox.http;

import dev.inbox.Execution;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.InboxDatabaseException;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import dev.inbox.http.spi.RequestOutcome;
import dev.inbox.internal.HandlerError;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/**
 * {@link IdempotencyFilter.Mode#TRANSACTIONAL}: the request runs as the handler of {@link
 * Inbox#execute}, on the transaction the inbox claims its key in, so that the handler's writes, the
 * key and the stored response commit together. A response whose status is not stored fails the
 * attempt instead: its writes roll back and the inbox counts it.
 */
final class TransactionalMode implements ModeStrategy {
  /** PostgreSQL's in_failed_sql_transaction: an earlier error aborted the transaction. */
  private static final String IN_FAILED_SQL_TRANSACTION = "25P02";

  private final Inbox inbox;
  private final StoredResponses responses;
  private final Answers answers;

  TransactionalMode(Inbox inbox, StoredResponses responses, Answers answers) {
    this.inbox = inbox;
    this.responses = responses;
    this.answers = answers;
  }

  /**
   * A request whose key is in flight waits for the first one on the database, for at most the
   * inbox's lockTimeout, before it is found in flight.
   */
  @Override
  public Optional<Answer> attempt(KeyedRequest keyed, HandlerRuns handler) {
    // The inbox may run the handler again (a consumer recorded the key while it ran, and nothing
    // of that run committed), so each run buffers its own response, and the last one answers.
    Execution execution;
    try {
      execution =
          inbox.execute(
              keyed.scope(),
              keyed.key(),
              keyed.fingerprint(),
              tx -> runInTransaction(tx, keyed.request(), handler));
    } catch (HandlerFailedException e) {
      return Optional.of(failedAttempt(keyed, e, handler.last()));
    } catch (InboxDatabaseException e) {
      HandlerRuns.Run run = handler.last();
      if (run != null && run.failure() != null && TransientFailures.isTransient(e)) {
        // A deadlock, serialization failure or lost connection says nothing about the request:
        // the key stays as it was, and the attempt is not counted towards maxAttempts.
        return Optional.of(answers.handlerFailed(keyed, run.failure()));
      }
      throw e;
    }
    if (!execution.executed()) {
      return answers.existing(execution.claim());
    }
    return Optional.of(Answer.buffered(RequestOutcome.FRESH, handler.last().response()));
  }

  private StoredResult runInTransaction(Connection tx, BufferedRequest request, HandlerRuns handler)
      throws Exception {
    request.setAttribute(IdempotentRequests.CONNECTION_ATTRIBUTE, tx);
    HandlerRuns.Run run;
    try {
      run = handler.run(request);
    } finally {
      request.removeAttribute(IdempotentRequests.CONNECTION_ATTRIBUTE);
    }
    if (run.failure() instanceof Error e) {
      // An Error (a StackOverflowError, say) fails the attempt like any exception.
      throw new HandlerError(e);
    }
    if (run.failure() instanceof Exception e) {
      throw e;
    }
    int status = run.response().getStatus();
    if (!responses.isStored(status)) {
      throw new UnstoredAnswer(status);
    }
    return responses.stored(run.response());
  }

  /**
   * Answers a request whose attempt failed and was counted: its writes were rolled back. A cause
   * that is not the handler's own is the filter's failure, and thrown.
   */
  private Answer failedAttempt(KeyedRequest keyed, HandlerFailedException e, HandlerRuns.Run run) {
    Throwable cause = e.getCause();
    if (run == null) {
      throw e;
    }
    if (cause instanceof UnstoredAnswer) {
      return Answer.buffered(RequestOutcome.RELEASED, run.response());
    }
    Throwable thrown = HandlerError.unwrap(cause);
    if (run.failure() != null && thrown == run.failure()) {
      return answers.handlerFailed(keyed, run.failure());
    }
    if (run.failure() == null
        && cause instanceof SQLException sql
        && IN_FAILED_SQL_TRANSACTION.equals(sql.getSQLState())) {
      return answers.abortedTransaction(keyed, run.response().getStatus(), sql);
    }
    throw e;
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
}
