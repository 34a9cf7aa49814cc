package dev.inbox.internal;

/**
 * A failure's text as the {@code last_error} column can hold it. PostgreSQL's {@code text} refuses
 * U+0000 (SQLSTATE 22021), and a handler's exception may quote a hostile payload as it came ({@code
 * Long.parseLong} puts its whole input in its message): written as it is, the write of the failure
 * itself would fail, and with it the count of the attempt or the whole batch. Each NUL is therefore
 * written as the six characters {@code \u0000}; nothing else changes.
 */
final class FailureText {
  private FailureText() {}

  /** The text with each U+0000 written as {@code \u0000}; null stays null. */
  static String storable(String text) {
    return text == null || text.indexOf('\0') < 0 ? text : text.replace("\0", "\\u0000");
  }

  /** {@link #storable} of the failure's {@code toString()}. */
  static String of(Throwable failure) {
    return storable(String.valueOf(failure));
  }
}
