package dev.inbox;

import java.time.Instant;
import java.util.Optional;

/**
 * The answer to a claim of one (scope, key).
 *
 * @param scope the scope
 * @param key the key
 * @param outcome what the claim found
 * @param attempts the attempts recorded for the key, this claim included when it is {@code NEW}
 * @param fencingToken the record's fencing token after the claim (0 when there is no record)
 * @param storedResult for {@code DUPLICATE}, the result stored by the first execution, if any
 * @param lockedUntil for {@code IN_PROGRESS}, when the other owner's lease ends (null: unknown);
 *     for a leased {@code NEW}, when this owner's lease ends
 * @param leaseToken for a leased {@code NEW}, the token to complete, fail or renew with
 * @param fingerprint the fingerprint presented with the claim (null: none); a failure recorded for
 *     a {@code NEW} claim keeps it on the key, so that a retry with another request is a {@code
 *     MISMATCH}
 */
public record Claim(
    String scope,
    String key,
    ClaimOutcome outcome,
    int attempts,
    long fencingToken,
    StoredResult storedResult,
    Instant lockedUntil,
    LeaseToken leaseToken,
    byte[] fingerprint) {

  /** A claim without a fingerprint. */
  public Claim(
      String scope,
      String key,
      ClaimOutcome outcome,
      int attempts,
      long fencingToken,
      StoredResult storedResult,
      Instant lockedUntil,
      LeaseToken leaseToken) {
    this(scope, key, outcome, attempts, fencingToken, storedResult, lockedUntil, leaseToken, null);
  }

  public boolean isNew() {
    return outcome == ClaimOutcome.NEW;
  }

  public Optional<StoredResult> result() {
    return Optional.ofNullable(storedResult);
  }

  public Optional<LeaseToken> lease() {
    return Optional.ofNullable(leaseToken);
  }
}
