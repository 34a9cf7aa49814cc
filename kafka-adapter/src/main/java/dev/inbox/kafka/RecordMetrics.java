package dev.inbox.kafka;

import java.time.Duration;

/** What the adapter counts; the Micrometer binding lives in {@link MicrometerRecordMetrics}. */
interface RecordMetrics {
  RecordMetrics NONE =
      new RecordMetrics() {
        @Override
        public void records(String topic, String outcome, int count) {}

        @Override
        public void batch(Duration latency) {}
      };

  /**
   * @param outcome {@code new}, {@code duplicate}, {@code failed}, {@code dead_lettered}, or {@code
   *     dead_letter_failed} (a dead letter that could not be published)
   */
  void records(String topic, String outcome, int count);

  void batch(Duration latency);
}
