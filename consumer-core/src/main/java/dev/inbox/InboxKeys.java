package dev.inbox;

/**
 * The rules for keys and scopes: 1 to 255 characters, not blank, no control characters, and valid
 * Unicode (no lone surrogate). Adapters call {@link #validateKey} before they claim, so that a bad
 * key can be dead-lettered with the rule that failed.
 */
public final class InboxKeys {
  /** The longest key or scope, in Unicode code points. */
  public static final int MAX_LENGTH = 255;

  private InboxKeys() {}

  /** Throws {@link InvalidKeyException} naming the broken rule, or returns the key unchanged. */
  public static String validateKey(String key) {
    return validate("key", key);
  }

  /** Throws {@link InvalidKeyException} naming the broken rule, or returns the scope unchanged. */
  public static String validateScope(String scope) {
    return validate("scope", scope);
  }

  /** The rule the value breaks, or null when it is valid. */
  public static String brokenRule(String value) {
    if (value == null) {
      return "must not be null";
    }
    if (value.isEmpty()) {
      return "must not be empty";
    }
    int length = 0;
    boolean blank = true;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1))) {
          return "must be valid Unicode, but has a lone surrogate at index " + i;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return "must be valid Unicode, but has a lone surrogate at index " + i;
      } else if (Character.isISOControl(c)) {
        return "must not contain control characters, but has U+"
            + String.format("%04X", (int) c)
            + " at index "
            + i;
      }
      if (!Character.isWhitespace(c) && !Character.isSpaceChar(c)) {
        blank = false;
      }
      length++;
    }
    if (length > MAX_LENGTH) {
      return "must be at most " + MAX_LENGTH + " characters, but has " + length;
    }
    if (blank) {
      return "must not be blank";
    }
    return null;
  }

  private static String validate(String field, String value) {
    String rule = brokenRule(value);
    if (rule != null) {
      throw new InvalidKeyException(field, value, rule);
    }
    return value;
  }

  /** A short, printable rendering of a possibly hostile value, for error messages and logs. */
  public static String describe(String value) {
    if (value == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder("'");
    int shown = Math.min(value.length(), 64);
    for (int i = 0; i < shown; i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append(value.length() > shown ? "...' (" + value.length() + " chars)" : "'");
    return out.toString();
  }
}
