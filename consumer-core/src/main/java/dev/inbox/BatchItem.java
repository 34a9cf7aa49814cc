package dev.inbox;

/**
 * One message of a batch.
 *
 * @param key the message id or idempotency key
 * @param fingerprint the SHA-256 of the payload, or null to skip the mismatch check
 * @param payload what the handler gets
 * @param <T> the payload type
 */
public record BatchItem<T>(String key, byte[] fingerprint, T payload) {
  public static <T> BatchItem<T> of(String key, T payload) {
    return new BatchItem<>(key, null, payload);
  }
}
