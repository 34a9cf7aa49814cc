package dev.inbox.spi;

import dev.inbox.Claim;
import dev.inbox.Inbox;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Claims a batch of keys on the caller's transaction at once, for integrations that hand a batch of
 * messages to one call (Spring's batch listeners). Each key answers exactly as {@link
 * Inbox#claim(Connection, String, String, byte[])} would answer it, in the batch's order, a key
 * repeated in the batch included (its first occurrence claims it; a later one reads what this
 * transaction wrote: {@code DUPLICATE}, or {@code MISMATCH} with another fingerprint). The inbox's
 * own implementation claims the distinct keys in a few round trips for the whole batch, where one
 * key at a time costs one round trip each.
 */
public interface BatchClaims {

  /**
   * Claims {@code keys} in {@code scope} on the caller's transaction (auto-commit off), one answer
   * per key, in order; {@code fingerprints} has one entry per key (null entries: no check), or is
   * null for none. A new key's record is written {@code COMPLETED}, committed with the caller's
   * transaction or not at all, as with {@code Inbox.claim}.
   */
  List<Claim> claimAll(
      Connection transaction, String scope, List<String> keys, List<byte[]> fingerprints);

  /** The inbox's batch claim, or, for an {@link Inbox} of another kind, one claim per key. */
  static BatchClaims of(Inbox inbox) {
    Objects.requireNonNull(inbox, "inbox");
    if (inbox instanceof BatchClaims batchClaims) {
      return batchClaims;
    }
    return (transaction, scope, keys, fingerprints) -> {
      List<Claim> claims = new ArrayList<>(keys.size());
      for (int i = 0; i < keys.size(); i++) {
        claims.add(
            inbox.claim(
                transaction,
                scope,
                keys.get(i),
                fingerprints == null ? null : fingerprints.get(i)));
      }
      return claims;
    };
  }
}
