package dev.inbox.testing;

/**
 * Reads a test setting from a system property, else from the environment variable of the same
 * meaning.
 */
public final class Settings {
  private Settings() {}

  /**
   * @param property a system property, such as {@code inbox.test.jdbc-url}
   * @param environment an environment variable, such as {@code INBOX_TEST_JDBC_URL}
   * @return the value, or null when neither is set or both are blank
   */
  public static String explicit(String property, String environment) {
    String value = System.getProperty(property);
    if (value == null || value.isBlank()) {
      value = System.getenv(environment);
    }
    return value == null || value.isBlank() ? null : value.trim();
  }
}
