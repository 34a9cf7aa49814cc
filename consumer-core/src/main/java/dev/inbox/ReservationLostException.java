package dev.inbox;

/**
 * The completion of a {@link Reservation} found that another claimant recorded the key first: a
 * consumer's batch, or a claim in another transaction, which does not look at reservations. The
 * completion did not happen and nothing of the transaction was committed; roll it back and reserve
 * the key again, which then answers with that claimant's outcome.
 */
public final class ReservationLostException extends InboxException {
  private static final long serialVersionUID = 1L;

  public ReservationLostException(String scope, String key, String found, Throwable cause) {
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
  }
}
