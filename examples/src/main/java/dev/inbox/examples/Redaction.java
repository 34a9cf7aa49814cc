package dev.inbox.examples;

import java.util.regex.Pattern;

/**
 * Masks passwords in text meant for a person: {@code password=} parameters of JDBC URLs (and any
 * {@code ...password=} such as {@code sslpassword=}) and the password of a URI's user info, as in
 * {@code amqp://user:secret@host}. Everything the examples print about a URL, an exception or a
 * usage message goes through it.
 */
final class Redaction {
  static final String MASK = "***";

  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("(?i)(password\\s*=\\s*)[^&;,\\s'\"]+");
  private static final Pattern USER_INFO_PASSWORD =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\\s]*):[^@/?#\\s]*@");

  private Redaction() {}

  static String mask(String text) {
    if (text == null) {
      return null;
    }
    String masked = PASSWORD_PARAMETER.matcher(text).replaceAll("$1" + MASK);
    return USER_INFO_PASSWORD.matcher(masked).replaceAll("$1:" + MASK + "@");
  }
}
