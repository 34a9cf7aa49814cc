package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * The set-based handler's builder. What the handler does with resent, failing and rejected records
 * is in {@link KafkaAcceptanceTest} ({@code AT_ONCE}).
 */
class NewRecordsHandlerTest extends KafkaTestSupport {

  @Test
  void theBuilderTakesExactlyOneHandler() {
    var builder =
        InboxKafkaConsumer.builder(new StringDeserializer(), new StringDeserializer())
            .properties(Map.of("bootstrap.servers", "127.0.0.1:1", "group.id", "g"))
            .topics("t")
            .inbox(inbox(settings().build()));
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("set handler(...) or newRecordsHandler(...)");
    builder.handler((record, tx) -> {}).newRecordsHandler((records, tx) -> {});
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not both");
  }
}
