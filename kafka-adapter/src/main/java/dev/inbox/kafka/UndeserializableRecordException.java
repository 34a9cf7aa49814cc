package dev.inbox.kafka;

import dev.inbox.NonRetryableException;

/** The adapter could not turn a record's bytes into the handler's types. */
final class UndeserializableRecordException extends NonRetryableException {
  private static final long serialVersionUID = 1L;

  UndeserializableRecordException(String message, Throwable cause) {
    super(message, cause);
  }
}
