package dev.inbox.http;

import dev.inbox.InboxKeys;

/**
 * Parses an Idempotency-Key header value: the draft's structured-field string ({@code "abc"}, with
 * {@code \"} and {@code \\} escapes) or a bare token, which is trimmed. Both must be printable
 * ASCII, as an sf-string is, and then follow the rules of {@link InboxKeys}, so {@code "abc"} and
 * {@code abc} name the same key.
 */
final class IdempotencyKeyHeader {
  private IdempotencyKeyHeader() {}

  /**
   * The value has a character outside printable ASCII. Containers decode header bytes as they
   * please (Jetty as ISO-8859-1), so the character is never named: only where it is.
   */
  static final class NotAsciiException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    NotAsciiException(int index) {
      super(
          "must be printable ASCII (the draft's structured-field string, RFC 8941), but has a"
              + " non-ASCII byte at index "
              + index
              + "; send a key of ASCII letters, digits and punctuation, such as a UUID");
    }
  }

  /**
   * The key.
   *
   * @throws IllegalArgumentException whose message is the broken rule, phrased to follow the
   *     header's name ("must not be empty"); a {@link NotAsciiException} for a non-ASCII value
   */
  static String parse(String value) {
    for (int i = 0; i < value.length(); i++) {
      // DEL (0x7F) is ASCII: InboxKeys names it, with the other controls.
      if (value.charAt(i) > 0x7F) {
        throw new NotAsciiException(i);
      }
    }
    String trimmed = value.trim();
    String key = trimmed.startsWith("\"") ? unquote(trimmed) : trimmed;
    String broken = InboxKeys.brokenRule(key);
    if (broken != null) {
      throw new IllegalArgumentException(broken);
    }
    return key;
  }

  private static String unquote(String quoted) {
    if (quoted.length() < 2 || !quoted.endsWith("\"")) {
      throw new IllegalArgumentException(
          "must end with a double quote when it starts with one (a structured-field string)");
    }
    StringBuilder key = new StringBuilder();
    for (int i = 1; i < quoted.length() - 1; i++) {
      char c = quoted.charAt(i);
      if (c == '\\') {
        if (i + 1 >= quoted.length() - 1) {
          throw new IllegalArgumentException(
              "must not end with a backslash inside its double quotes");
        }
        char escaped = quoted.charAt(++i);
        if (escaped != '"' && escaped != '\\') {
          throw new IllegalArgumentException(
              "may escape only \\\" and \\\\ inside its double quotes, but escapes '"
                  + escaped
                  + "'");
        }
        key.append(escaped);
      } else if (c == '"') {
        throw new IllegalArgumentException(
            "must escape a double quote inside its double quotes as \\\"");
      } else {
        key.append(c);
      }
    }
    return key.toString();
  }
}
