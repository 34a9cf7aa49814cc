package dev.inbox.spring;

/**
 * Another transaction held the message's key past {@code inbox.lock-timeout} (the same message
 * delivered twice at once, across a rebalance say). Retryable: the container's error handling
 * delivers the message again, and it is then a duplicate or new.
 */
public class KeyInProgressException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String scope;
  private final String key;

  public KeyInProgressException(String scope, String key) {
    super(
        "key '"
            + key
            + "' in scope '"
            + scope
            + "' is held by another transaction past inbox.lock-timeout; the message will be"
            + " delivered again");
    this.scope = scope;
    this.key = key;
  }

  public String scope() {
    return scope;
  }

  public String key() {
    return key;
  }
}
