package dev.inbox;

/**
 * A key or scope broke one of the rules in {@link InboxKeys}. Nothing was written.
 *
 * <p>{@link #field()} says whether the key or the scope was wrong, and {@link #rule()} names the
 * rule.
 */
public final class InvalidKeyException extends InboxException {
  private static final long serialVersionUID = 1L;
  private final String field;
  private final String rule;

  public InvalidKeyException(String field, String value, String rule) {
    super(
        null,
        null,
        "invalid " + field + " " + InboxKeys.describe(value) + ": " + field + " " + rule,
        null);
    this.field = field;
    this.rule = rule;
  }

  /** "key" or "scope". */
  public String field() {
    return field;
  }

  /** The rule that failed, for example "must be at most 255 characters". */
  public String rule() {
    return rule;
  }
}
