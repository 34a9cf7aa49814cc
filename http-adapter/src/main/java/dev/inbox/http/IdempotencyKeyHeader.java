package dev.inbox.http;

import dev.inbox.InboxKeys;
import dev.inbox.InvalidKeyException;

/**
 * Parses an Idempotency-Key header as it arrives over HTTP: printable ASCII, as the draft's
 * structured-field string is, and then {@link InboxKeys#fromIdempotencyKeyHeader}, the parser the
 * message consumers use for the same header, so {@code "abc"} and {@code abc} name the same key on
 * every channel.
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
    try {
      return InboxKeys.fromIdempotencyKeyHeader(value);
    } catch (InvalidKeyException e) {
      throw new IllegalArgumentException(e.rule(), e);
    }
  }
}
