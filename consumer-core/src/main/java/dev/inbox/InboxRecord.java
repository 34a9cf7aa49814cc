package dev.inbox;

import java.time.Instant;

/**
 * One row of the inbox table, as {@link InboxAdmin#find} returns it for operators.
 *
 * @param scope who owns the key
 * @param key the message id or Idempotency-Key
 * @param fingerprint the SHA-256 of the request, or null
 * @param state the stored state
 * @param attempts the attempts counted so far
 * @param leaseOwner the lease owner (leased mode), or null
 * @param fencingToken grows with every claim that takes the key over
 * @param lockedUntil the end of the lease (leased mode), or null
 * @param result the stored result, or null
 * @param lastError the last failure's text, or null
 * @param createdAt when the key was first claimed
 * @param updatedAt when the row last changed
 * @param completedAt when it completed, or null
 */
public record InboxRecord(
    String scope,
    String key,
    byte[] fingerprint,
    RecordState state,
    int attempts,
    String leaseOwner,
    long fencingToken,
    Instant lockedUntil,
    StoredResult result,
    String lastError,
    Instant createdAt,
    Instant updatedAt,
    Instant completedAt) {}
