package dev.inbox.testing.acceptance;

/**
 * A dead letter as the suite reads it, whatever broker carried it. A dead letter is the original
 * message with headers added: the fixture reads the original key and payload as it published them,
 * the reason and the rest from the headers that every adapter adds ({@code DeadLetterHeaders}), and
 * the origin from the adapter's own header (Kafka's original topic, RabbitMQ's original queue).
 *
 * @param originalKey the key where the message carried it (Kafka's {@code idempotency-key} header,
 *     RabbitMQ's {@code messageId} or header), taken as it is
 * @param payload the original payload, as text
 * @param origin the topic or queue the message was consumed from
 * @param reason the reason code, such as {@code gave_up}
 * @param detail the reason in a sentence
 * @param key the key the adapter found; null when the header is absent
 * @param attempts the handler runs that the inbox counted for the key
 * @param exceptionClass the class of the last exception; null when there was none
 * @param exceptionMessage its message; null when there was none
 */
public record DeadLetter(
    String originalKey,
    String payload,
    String origin,
    String reason,
    String detail,
    String key,
    int attempts,
    String exceptionClass,
    String exceptionMessage) {}
