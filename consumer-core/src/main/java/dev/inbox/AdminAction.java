package dev.inbox;

/**
 * Who changes a key through {@link InboxAdmin#release(String, String, AdminAction)} or {@link
 * InboxAdmin#settle}, and why: the audit trail records both with the record before and after.
 *
 * @param actor who: a person or a tool, 1 to 255 characters, not blank, no control characters
 * @param reason why (a ticket, the provider's answer): 1 to 4000 characters, not blank
 * @param force whether a key under a live lease may be taken from its owner, which risks a double
 *     effect; see {@link LiveLeaseException}. Defaults to false.
 */
public record AdminAction(String actor, String reason, boolean force) {
  /** The longest reason kept. */
  public static final int MAX_REASON_LENGTH = 4000;

  public AdminAction {
    if (actor == null || actor.isBlank()) {
      throw new IllegalArgumentException(
          "actor must name who makes the change (a person or a tool), but was "
              + (actor == null ? "null" : "blank"));
    }
    if (actor.length() > 255 || actor.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(
          "actor must be at most 255 characters without control characters, but was "
              + InboxKeys.describe(actor));
    }
    if (reason == null || reason.isBlank()) {
      throw new IllegalArgumentException(
          "reason must say why the key is changed (a ticket, the provider's answer), but was "
              + (reason == null ? "null" : "blank"));
    }
    if (reason.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("reason must not contain a NUL character");
    }
    if (reason.length() > MAX_REASON_LENGTH) {
      throw new IllegalArgumentException(
          "reason must be at most "
              + MAX_REASON_LENGTH
              + " characters, but was "
              + reason.length());
    }
  }

  /** A change that leaves a key under a live lease alone. */
  public static AdminAction of(String actor, String reason) {
    return new AdminAction(actor, reason, false);
  }

  /** This change, allowed to take a key from the owner of a live lease. */
  public AdminAction forced() {
    return new AdminAction(actor, reason, true);
  }
}
