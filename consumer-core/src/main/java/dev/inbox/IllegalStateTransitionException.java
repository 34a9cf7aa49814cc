package dev.inbox;

/** A state change that the inbox's transition table does not allow, such as COMPLETED to FAILED. */
public final class IllegalStateTransitionException extends InboxException {
  private static final long serialVersionUID = 1L;
  private final RecordState from;
  private final RecordState to;

  public IllegalStateTransitionException(
      String scope, String key, RecordState from, RecordState to) {
    super(
        scope,
        key,
        "key '"
            + key
            + "' in scope '"
            + scope
            + "' cannot move from "
            + (from == null ? "no record" : from)
            + " to "
            + to,
        null);
    this.from = from;
    this.to = to;
  }

  /** The state found, or null when there was no record. */
  public RecordState from() {
    return from;
  }

  public RecordState to() {
    return to;
  }
}
