package dev.inbox.testing.api;

import java.util.List;

/** Uses an internal type only in its body, which is allowed. */
public final class Clean {
  public List<String> names() {
    return List.of(new dev.inbox.testing.api.internal.Hidden().getClass().getName());
  }
}
