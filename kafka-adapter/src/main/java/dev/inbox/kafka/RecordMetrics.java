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
   * @param outcome {@code new}, {@code duplicate}, {@code failed} or {@code dead_lettered}
   */
  void records(String topic, String outcome, int count);

  void batch(Duration latency);
}
