package dev.inbox;

import java.time.Instant;

/**
 * An operator asked to release or settle a key whose lease runs on, without {@code force}. Nothing
 * was changed. Its owner may be performing the side effect right now: taking the key from it risks
 * a double effect (a release lets the next claim run the handler again) or a recorded result that
 * the owner's effect contradicts (a settle). Either way the owner is fenced off: its {@code
 * complete} then fails with {@link LeaseLostException}.
 */
public final class LiveLeaseException extends InboxException {
  private static final long serialVersionUID = 1L;
  private final String owner;
  private final long fencingToken;
  private final Instant lockedUntil;

  public LiveLeaseException(
      String scope, String key, String verb, String owner, long fencingToken, Instant lockedUntil) {
    super(
        scope,
        key,
        "key '"
            + key
            + "' in scope '"
            + scope
            + "' is IN_PROGRESS under a live lease of owner '"
            + owner
            + "' until "
            + lockedUntil
            + " (fencing token "
            + fencingToken
            + "), so it was not "
            + verb
            + "d. Its owner may be performing the side effect right now: "
            + ("release".equals(verb)
                ? "releasing it lets the next claim run the handler again, a double effect"
                    + " unless the effect is idempotent."
                : "settling it records a result that the owner's effect may contradict.")
            + " The owner's complete() would fail with LeaseLostException. Wait until the lease"
            + " expires, or force it once you know the owner is gone.",
        null);
    this.owner = owner;
    this.fencingToken = fencingToken;
    this.lockedUntil = lockedUntil;
  }

  /** The lease's owner. */
  public String owner() {
    return owner;
  }

  /** The owner's fencing token, which a forced change makes stale. */
  public long fencingToken() {
    return fencingToken;
  }

  /** When the lease ends, on the database's clock, unless renewed. */
  public Instant lockedUntil() {
    return lockedUntil;
  }
}
