package dev.inbox;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

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

  /**
   * The key that an {@code Idempotency-Key} header value names, wherever the header arrives: an
   * HTTP request, or a Kafka record or AMQP message that a gateway copied it into, so that one
   * payment is one key on every channel. The draft (draft-ietf-httpapi-idempotency-key-header)
   * makes the value an RFC 8941 string, {@code "q-1"}, which is unquoted, with its {@code \"} and
   * {@code \\} escapes; a bare value, as most clients send, is taken as it is ({@code q-1} and
   * {@code "q-1"} are the same key). Spaces and tabs around either are trimmed. The key must then
   * follow this class's rules.
   *
   * @throws InvalidKeyException naming the rule broken: a value that starts with a double quote but
   *     is not a well-formed quoted string, or a key that breaks a rule of {@link #brokenRule}
   */
  public static String fromIdempotencyKeyHeader(String value) {
    if (value == null) {
      throw new InvalidKeyException("key", null, "must not be null");
    }
    int start = 0;
    int end = value.length();
    while (start < end && isSpaceOrTab(value.charAt(start))) {
      start++;
    }
    while (end > start && isSpaceOrTab(value.charAt(end - 1))) {
      end--;
    }
    String trimmed = value.substring(start, end);
    String key = trimmed.startsWith("\"") ? unquote(value, trimmed) : trimmed;
    return validateKey(key);
  }

  /**
   * {@link #fromIdempotencyKeyHeader(String)} of a header that arrives as bytes (an AMQP byte array
   * or long string, a Kafka header), decoded as strict UTF-8: decoding leniently would turn
   * different invalid byte sequences into the same U+FFFD, so one payment could pass for a
   * duplicate of another.
   *
   * @throws InvalidKeyException when the bytes are not valid UTF-8, or for any reason the text is
   */
  public static String fromIdempotencyKeyHeaderBytes(byte[] value) {
    if (value == null) {
      throw new InvalidKeyException("key", null, "must not be null");
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(value))
              .toString();
    } catch (CharacterCodingException e) {
      throw new InvalidKeyException(
          "key",
          new String(value, StandardCharsets.UTF_8),
          "must be valid UTF-8, but its " + value.length + " bytes are not");
    }
    return fromIdempotencyKeyHeader(text);
  }

  private static boolean isSpaceOrTab(char c) {
    return c == ' ' || c == '\t';
  }

  private static String unquote(String value, String quoted) {
    if (quoted.length() < 2 || !quoted.endsWith("\"")) {
      throw new InvalidKeyException(
          "key",
          value,
          "must end with a double quote when it starts with one (a structured-field string)");
    }
    StringBuilder key = new StringBuilder();
    for (int i = 1; i < quoted.length() - 1; i++) {
      char c = quoted.charAt(i);
      if (c == '\\') {
        if (i + 1 >= quoted.length() - 1) {
          throw new InvalidKeyException(
              "key", value, "must not end with a backslash inside its double quotes");
        }
        char escaped = quoted.charAt(++i);
        if (escaped != '"' && escaped != '\\') {
          throw new InvalidKeyException(
              "key",
              value,
              "may escape only \\\" and \\\\ inside its double quotes, but escapes '"
                  + escaped
                  + "'");
        }
        key.append(escaped);
      } else if (c == '"') {
        throw new InvalidKeyException(
            "key", value, "must escape a double quote inside its double quotes as \\\"");
      } else {
        key.append(c);
      }
    }
    return key.toString();
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
