package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Delivery;
import dev.inbox.testing.PaymentStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The set-based handler with deliveries without a key, and its builder. What it does with resent,
 * failing and rejected deliveries is in {@link RabbitAcceptanceTest} ({@code AT_ONCE}).
 */
class NewDeliveriesHandlerTest extends RabbitTestSupport {

  @Test
  void aDeliveryWithoutKeyIsHandedOverAloneWhenProcessedWithoutDeduplication() throws Exception {
    List<PaymentStream.Message> messages = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      messages.add(new PaymentStream.Message("ok-" + i, 1));
      if (i == 10) {
        messages.add(new PaymentStream.Message(null, 5));
      }
    }
    publish(messages);
    List<Integer> keylessCallSizes = new CopyOnWriteArrayList<>();
    started(
        consumerWithoutHandler(inbox(settings().build()), connection)
            .processDeliveriesWithoutKeyWithoutDeduplication(dataSource)
            .newDeliveriesHandler(
                (deliveries, tx) -> {
                  if (deliveries.stream().anyMatch(d -> d.getProperties().getMessageId() == null)) {
                    keylessCallSizes.add(deliveries.size());
                    effects.apply(tx, "keyless", amount(deliveries.get(0)));
                    return;
                  }
                  applyAll(deliveries, tx);
                }));

    assertExactlyOnceAndDrained(21, 25);
    assertThat(keylessCallSizes)
        .as("sizes of the calls with the keyless delivery")
        .containsExactly(1);
  }

  @Test
  void theBuilderTakesExactlyOneHandler() {
    InboxRabbitConsumer.Builder builder =
        consumerWithoutHandler(inbox(settings().build()), connection);
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a handler is required: set handler(...) or newDeliveriesHandler(...)");
    builder.handler((delivery, tx) -> {}).newDeliveriesHandler((deliveries, tx) -> {});
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("set handler(...) or newDeliveriesHandler(...), not both");
  }

  private void applyAll(List<Delivery> deliveries, Connection tx) throws SQLException {
    List<String> keys = new ArrayList<>();
    List<Long> amounts = new ArrayList<>();
    for (Delivery delivery : deliveries) {
      keys.add(delivery.getProperties().getMessageId());
      amounts.add(amount(delivery));
    }
    effects.applyAll(tx, keys, amounts);
  }
}
