package dev.inbox.testing.api.internal;

/** An internal type that {@link dev.inbox.testing.api.Leaky} exposes, for {@code PublicApiTest}. */
public class Hidden extends RuntimeException implements HiddenContract {
  private static final long serialVersionUID = 1L;

  /** Public, but in an internal package: not API, so naming another internal type is fine. */
  public Hidden self() {
    return this;
  }
}
