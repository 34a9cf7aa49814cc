package dev.inbox.testing.acceptance;

/** The two shapes of handler that every adapter takes; each scenario runs with both. */
public enum HandlerKind {
  /**
   * Called once per new message, in the inbox's transaction (Kafka's {@code RecordHandler},
   * RabbitMQ's {@code DeliveryHandler}); it hands the message to {@link Payments#apply}.
   */
  PER_ITEM,
  /**
   * Called once per batch with all of its new messages, for set-based writes (Kafka's {@code
   * NewRecordsHandler}, RabbitMQ's {@code NewDeliveriesHandler}); it hands them to {@link
   * Payments#applyAll}.
   */
  AT_ONCE
}
