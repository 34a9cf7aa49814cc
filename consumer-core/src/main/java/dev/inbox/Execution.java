package dev.inbox;

import java.util.Optional;

/**
 * The answer of {@link Inbox#execute}: either the handler ran and its writes committed together
 * with the record ({@link ClaimOutcome#NEW}), or it did not run, and the claim says why.
 *
 * @param claim the claim that decided it
 * @param result the handler's result for {@code NEW}, or the stored result for {@code DUPLICATE}
 */
public record Execution(Claim claim, StoredResult result) {

  public ClaimOutcome outcome() {
    return claim.outcome();
  }

  /** True when this call ran the handler and committed its writes. */
  public boolean executed() {
    return claim.outcome() == ClaimOutcome.NEW;
  }

  public Optional<StoredResult> storedResult() {
    return Optional.ofNullable(result);
  }
}
