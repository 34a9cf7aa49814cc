package dev.inbox;

/** What {@link InboxAdmin#settle} did. */
public enum SettleResult {
  /**
   * The key is {@code COMPLETED} with the operator's result (its record inserted, if it had none),
   * and its fencing token grew: every claim answers {@code DUPLICATE} with that result.
   */
  SETTLED,
  /**
   * The key counts as completed already ({@code COMPLETED}, or a caller's transaction committed its
   * claim without {@code complete()}); nothing was changed, since its effect and result stand.
   */
  NOT_SETTLEABLE
}
