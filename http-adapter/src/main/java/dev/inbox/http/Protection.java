package dev.inbox.http;

import dev.inbox.InboxKeys;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/**
 * Takes a keyed request to its one answer: attempts it in the filter's mode until an attempt
 * answers, waiting at most {@code inFlightWait} for a first request with the same key (then 409),
 * and answers the filter's own failures. Besides an {@link Error}, only an {@link IOException}
 * escapes: the client's connection failing, with nobody left to answer.
 */
final class Protection {
  private static final long POLL_MILLIS = 50;

  private final ModeStrategy mode;
  private final Answers answers;
  private final Duration inFlightWait;

  Protection(ModeStrategy mode, Answers answers, Duration inFlightWait) {
    this.mode = mode;
    this.answers = answers;
    this.inFlightWait = inFlightWait;
  }

  Answer answer(KeyedRequest keyed, HandlerRuns handler) throws IOException {
    try {
      return attemptUntilAnswered(keyed, handler);
    } catch (RuntimeException | ServletException e) {
      return answers.failure(keyed, e);
    }
  }

  /**
   * Attempts until an attempt answers or the wait bound passes, polling a key in flight. No lookup
   * first: the claim answers a settled key from its own read in the same round trip, with no lock
   * or write, so a separate read would only slow down first requests.
   */
  private Answer attemptUntilAnswered(KeyedRequest keyed, HandlerRuns handler)
      throws IOException, ServletException {
    long deadline = System.nanoTime() + inFlightWait.toNanos();
    while (true) {
      Optional<Answer> answer = mode.attempt(keyed, handler);
      if (answer.isPresent()) {
        return answer.get();
      }
      if (System.nanoTime() - deadline >= 0) {
        return answers.inProgress();
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
}
