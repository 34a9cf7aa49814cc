package dev.inbox;

/**
 * The root of every exception the inbox throws. It carries the scope and key it is about, when
 * there is one, and repeats them in its message.
 */
public class InboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String scope;
  private final String key;

  public InboxException(String scope, String key, String message, Throwable cause) {
    super(message, cause);
    this.scope = scope;
    this.key = key;
  }

  public InboxException(String message, Throwable cause) {
    this(null, null, message, cause);
  }

  /** The scope this exception is about, or null. */
  public String scope() {
    return scope;
  }

  /** The key this exception is about, or null. */
  public String key() {
    return key;
  }
}
