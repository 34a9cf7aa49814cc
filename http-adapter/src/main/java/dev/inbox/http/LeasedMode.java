package dev.inbox.http;

import dev.inbox.Claim;
import dev.inbox.Inbox;
import dev.inbox.InboxKeys;
import dev.inbox.LeaseLostException;
import dev.inbox.LeaseToken;
import dev.inbox.StoredResult;
import dev.inbox.TransientFailures;
import dev.inbox.http.spi.RequestOutcome;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link IdempotencyFilter.Mode#LEASED}: the claim commits at once with a lease, and the result or
 * failure is recorded after the handler ran. Once the handler has answered with a stored status its
 * effect has happened, so that answer is sent even when its result cannot be recorded.
 */
final class LeasedMode implements ModeStrategy {
  private static final long FIRST_BACKOFF_MILLIS = 50;
  private static final long MAX_BACKOFF_MILLIS = 1000;
  private static final Logger log = LoggerFactory.getLogger(IdempotencyFilter.class);

  private final Inbox inbox;
  private final StoredResponses responses;
  private final Answers answers;
  private final Duration completionRetry;

  LeasedMode(Inbox inbox, StoredResponses responses, Answers answers, Duration completionRetry) {
    this.inbox = inbox;
    this.responses = responses;
    this.answers = answers;
    this.completionRetry = completionRetry;
  }

  /** A request whose key is in flight does not wait here: the lease answers at once. */
  @Override
  public Optional<Answer> attempt(KeyedRequest keyed, HandlerRuns handler) throws IOException {
    // The lease starts in the claim's transaction, so it ends no earlier than this.
    long leaseEnd = System.nanoTime() + inbox.settings().leaseDuration().toNanos();
    Claim claim = inbox.leases().claim(keyed.scope(), keyed.key(), keyed.fingerprint());
    if (!claim.isNew()) {
      return answers.existing(claim);
    }
    LeaseToken lease =
        claim
            .lease()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "a NEW leased claim without a lease token indicates a bug"));
    HandlerRuns.Run run = handler.run(keyed.request());
    if (run.failure() != null) {
      // An Error (a StackOverflowError, say) fails the lease like any exception, rather than
      // holding the key until the lease ends.
      try {
        inbox.leases().fail(lease, "the handler threw " + run.failure());
      } catch (RuntimeException failing) {
        failing.addSuppressed(run.failure());
        throw failing;
      }
      return Optional.of(answers.handlerFailed(keyed, run.failure()));
    }
    int status = run.response().getStatus();
    if (!responses.isStored(status)) {
      inbox.leases().fail(lease, "the handler answered " + status);
      return Optional.of(Answer.buffered(RequestOutcome.RELEASED, run.response()));
    }
    boolean recorded = complete(lease, responses.stored(run.response()), leaseEnd);
    return Optional.of(
        Answer.buffered(
            recorded ? RequestOutcome.FRESH : RequestOutcome.NOT_RECORDED, run.response()));
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
  private boolean complete(LeaseToken lease, StoredResult result, long leaseEnd) {
    long deadline = System.nanoTime() + completionRetry.toNanos();
    if (leaseEnd - deadline < 0) {
      deadline = leaseEnd;
    }
    long backoffMillis = FIRST_BACKOFF_MILLIS;
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
        backoffMillis = Math.min(backoffMillis * 2, MAX_BACKOFF_MILLIS);
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
}
