package dev.inbox.testing;

import java.util.Locale;

/**
 * The inbox storage that the suites built on the shared fixtures run on, so that one suite proves
 * both layouts: {@code -Dinbox.test.storage=PARTITIONED} (or {@code INBOX_TEST_STORAGE}). The name
 * of a constant of {@code dev.inbox.Storage}, which this module cannot name itself; {@code TABLE}
 * when neither is set.
 */
public final class TestStorage {
  public static final String PROPERTY = "inbox.test.storage";
  public static final String ENVIRONMENT = "INBOX_TEST_STORAGE";

  private TestStorage() {}

  /** {@code TABLE} or {@code PARTITIONED}, as set; {@code TABLE} by default. */
  public static String name() {
    String value = Settings.explicit(PROPERTY, ENVIRONMENT);
    return value == null ? "TABLE" : value.toUpperCase(Locale.ROOT);
  }
}
