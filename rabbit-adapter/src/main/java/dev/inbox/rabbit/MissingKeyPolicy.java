package dev.inbox.rabbit;

/** What happens to a delivery without a usable key. */
public enum MissingKeyPolicy {
  /** Dead-letter it with the reason: the default. */
  DEAD_LETTER,
  /**
   * Run the handler without deduplication, in its own transaction. Only for consumers whose effects
   * are harmless when repeated.
   */
  PROCESS_WITHOUT_DEDUPLICATION
}
