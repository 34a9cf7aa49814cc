package dev.inbox;

import java.time.Instant;

/**
 * Proof that a leased claim owns a key. The fencing token grows with every takeover, so an owner
 * whose lease was taken over can no longer complete, fail or renew the key.
 *
 * @param scope the scope of the key
 * @param key the key
 * @param owner the lease owner that claimed it
 * @param fencingToken the token that must still be on the record
 * @param lockedUntil when the lease expires unless renewed
 */
public record LeaseToken(
    String scope, String key, String owner, long fencingToken, Instant lockedUntil) {}
