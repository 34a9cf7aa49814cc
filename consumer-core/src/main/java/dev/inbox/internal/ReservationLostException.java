package dev.inbox.internal;

import dev.inbox.InboxException;

/**
 * The completion of a reserved key found that another claimant recorded the key first: a consumer's
 * batch, or a claim in another transaction, which does not look at reservations. The completion did
 * not happen and nothing of the transaction was committed; {@code execute} rolls it back and claims
 * the key again, which then answers with that claimant's outcome. Never leaves the engine.
 */
final class ReservationLostException extends InboxException {
  private static final long serialVersionUID = 1L;

  /** True when the claimant that wrote the key was still open after lockTimeout. */
  final boolean claimantStillOpen;

  ReservationLostException(
      String scope, String key, String found, boolean claimantStillOpen, Throwable cause) {
    super(
        scope,
        key,
        "the reservation of key '"
            + key
            + "' in scope '"
            + scope
            + "' was lost: "
            + found
            + "; nothing was committed, so roll the transaction back and reserve the key again",
        cause);
    this.claimantStillOpen = claimantStillOpen;
  }
}
