package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.InboxKeys;
import org.junit.jupiter.api.Test;

/**
 * A gateway copies a client's {@code Idempotency-Key: "q-1"} into a Kafka or RabbitMQ header, and
 * the consumer records the payment under the key that {@link InboxKeys#fromIdempotencyKeyHeader}
 * reads from it (their default key extractors call it). The same header over HTTP must name the
 * same key, quoted or bare.
 */
class QuotedKeyAcrossChannelsTest extends FilterTestBase {

  @Test
  void a_payment_a_consumer_recorded_from_a_quoted_header_is_not_paid_again_over_http()
      throws Exception {
    inbox.execute(
        "tenant-a",
        InboxKeys.fromIdempotencyKeyHeader("\"q-1\""),
        tx -> {
          effects.apply(tx, "q-1", 100);
          return null;
        });

    for (String header : new String[] {"\"q-1\"", "q-1"}) {
      RawHttp.Response http = RawHttp.post(server.port(), "/payments", "key-a", header, "100");
      assertThat(http.status()).as(header + ": " + http.body()).isEqualTo(200);
      assertThat(http.replayed()).as(header + " is replayed").isTrue();
      assertThat(http.body()).contains("already-processed");
    }
    assertThat(server.runs).as("handler runs").hasValue(0);
    assertThat(effects.count()).as("effect rows across both channels").isEqualTo(1);
  }
}
