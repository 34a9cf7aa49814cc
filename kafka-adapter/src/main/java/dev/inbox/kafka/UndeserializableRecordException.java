package dev.inbox.kafka;

/** The adapter could not turn a record's bytes into the handler's types. */
final class UndeserializableRecordException extends NonRetryableException {
  UndeserializableRecordException(String message, Throwable cause) {
    super(message, cause);
  }
}
