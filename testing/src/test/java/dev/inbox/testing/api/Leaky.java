package dev.inbox.testing.api;

import dev.inbox.testing.api.internal.Hidden;
import dev.inbox.testing.api.internal.HiddenContract;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Names internal types in every kind of signature that {@code PublicApi} checks. */
public class Leaky implements Supplier<List<Hidden>> {
  public Hidden field;

  protected Leaky(Hidden parameter) {}

  public Leaky() {}

  @Override
  public List<Hidden> get() {
    return List.of();
  }

  public void takes(Map<String, ? extends HiddenContract[]> parameter) {}

  public void throwsIt() throws Hidden {}

  public <T extends HiddenContract> void bounded(T value) {}

  /** Private, and package-private below: not API. */
  @SuppressWarnings("unused")
  private Hidden hiddenPrivately() {
    return null;
  }

  Hidden hiddenInPackage() {
    return null;
  }

  /** A public type nested in a public one is API too. */
  public static class Nested extends Hidden {
    private static final long serialVersionUID = 1L;
  }

  /** Not public: not API. */
  static class PackagePrivate {
    public Hidden notApi() {
      return null;
    }
  }
}
