package dev.inbox.http;

import java.io.IOException;
import java.util.Optional;

/**
 * One attempt at a keyed request in one of the filter's {@link IdempotencyFilter.Mode modes}: claim
 * the key and, when the claim is new, run the handler and record its result. An attempt answers, or
 * finds the key in flight; it throws only for the filter's own failures, never for the handler's.
 */
interface ModeStrategy {
  /**
   * @return the answer, or empty when another request holds the key: wait and attempt again
   */
  Optional<Answer> attempt(KeyedRequest keyed, HandlerRuns handler) throws IOException;
}
