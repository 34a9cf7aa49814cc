package dev.inbox;

/**
 * The leased mode, for side effects outside the database (a call to a payment provider): a claim
 * commits {@code IN_PROGRESS} at once, with a lease of {@code leaseDuration} and a fencing token,
 * and the result or failure is recorded after the effect. When a lease ends, and whether it has, is
 * decided by the database's clock, never the node's. An expired lease is taken over by the next
 * claim atomically, with a new fencing token; the old holder's calls then throw {@link
 * LeaseLostException}.
 */
public interface Leases {

  /**
   * Claims the key and commits {@code IN_PROGRESS} at once. On {@code NEW}, {@link Claim#lease()}
   * holds the token to complete, fail or renew with.
   *
   * @param fingerprint the SHA-256 of the request, or null to skip the mismatch check
   */
  Claim claim(String scope, String key, byte[] fingerprint);

  /**
   * Completes a leased claim with its result (null: none).
   *
   * @throws LeaseLostException when another owner took the lease over
   */
  void complete(LeaseToken lease, StoredResult result);

  /**
   * Records a leased claim's failure; the key can be claimed again until {@code maxAttempts}.
   *
   * @throws LeaseLostException when another owner took the lease over
   */
  void fail(LeaseToken lease, String error);

  /**
   * Extends a lease to {@code leaseDuration} from now, on the database's clock.
   *
   * @throws LeaseLostException when another owner took the lease over
   */
  LeaseToken renew(LeaseToken lease);
}
