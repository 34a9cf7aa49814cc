package dev.inbox.kafka;

/**
 * Thrown by a handler (or by the adapter, for a record it cannot deserialize) for a record that no
 * retry can fix: the record goes to the dead-letter topic at once.
 */
public class NonRetryableException extends RuntimeException {
  public NonRetryableException(String message) {
    super(message);
  }

  public NonRetryableException(String message, Throwable cause) {
    super(message, cause);
  }
}
