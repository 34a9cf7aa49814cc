package dev.inbox;

/**
 * A leased owner tried to complete, fail or renew a key whose lease another owner has taken over
 * (or that is no longer {@code IN_PROGRESS}). Its work must be treated as not recorded.
 */
public final class LeaseLostException extends InboxException {
  private static final long serialVersionUID = 1L;
  private final long fencingToken;

  public LeaseLostException(String scope, String key, long fencingToken, String found) {
    super(
        scope,
        key,
        "lease on key '"
            + key
            + "' in scope '"
            + scope
            + "' with fencing token "
            + fencingToken
            + " was lost ("
            + found
            + "); another owner took it over, so this owner must not record a result",
        null);
    this.fencingToken = fencingToken;
  }

  public long fencingToken() {
    return fencingToken;
  }
}
