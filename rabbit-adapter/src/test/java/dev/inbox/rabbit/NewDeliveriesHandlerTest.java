package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.DeadLetterReason;
import dev.inbox.testing.PaymentStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The set-based handler: one call per batch for all of its new deliveries. */
class NewDeliveriesHandlerTest extends RabbitTestSupport {

  @Test
  void resentDeliveriesTakeEffectOnceThroughOneCallPerBatch() throws Exception {
    PaymentStream stream = new PaymentStream("n", 8_000, 2_000, 4);
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger largestCall = new AtomicInteger();
    started(
        consumerWithoutHandler(inbox(settings().build()), connection)
            .newDeliveriesHandler(
                (deliveries, tx) -> {
                  calls.incrementAndGet();
                  largestCall.accumulateAndGet(deliveries.size(), Math::max);
                  applyAll(deliveries, tx);
                }));
    publish(stream);

    assertExactlyOnceAndDrained(stream);
    assertThat(largestCall.get()).as("deliveries in the largest call").isGreaterThan(1);
    assertThat(calls.get()).as("calls").isLessThan(8_000);
  }

  @Test
  void aFailingCallIsRunAgainDeliveryByDeliverySoThatOnlyThePoisonIsDeadLettered()
      throws Exception {
    List<PaymentStream.Message> messages = new ArrayList<>();
    long expectedSum = 0;
    for (int i = 0; i < 300; i++) {
      messages.add(new PaymentStream.Message("ok-" + i, i + 1));
      expectedSum += i + 1;
      if (i == 40) {
        messages.add(new PaymentStream.Message("poison-1", -1));
      }
    }
    messages.add(new PaymentStream.Message("ok-7", 8)); // a re-send
    // Published before the consumer starts, so that the poison arrives among other deliveries.
    publish(messages);
    AtomicInteger largestPoisonedCall = new AtomicInteger();
    started(
        consumerWithoutHandler(inbox(settings().maxAttempts(3).build()), connection)
            .newDeliveriesHandler(
                (deliveries, tx) -> {
                  for (Delivery delivery : deliveries) {
                    // As a set-based statement would: one bad row fails the whole call.
                    if (amount(delivery) < 0) {
                      largestPoisonedCall.accumulateAndGet(deliveries.size(), Math::max);
                      throw new IllegalStateException("cannot apply a negative payment");
                    }
                  }
                  applyAll(deliveries, tx);
                }));
    await(
        "the dead letter",
        Duration.ofSeconds(60),
        () -> readyMessages(queue.deadLetterQueue()) == 1);

    assertExactlyOnceAndDrained(300, expectedSum);
    assertThat(largestPoisonedCall.get())
        .as("deliveries in the largest call with the poison")
        .isGreaterThan(1);
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isEqualTo(1);
    GetResponse poison = takeDeadLetters(1).get("-1");
    assertThat(poison.getProps().getMessageId()).isEqualTo("poison-1");
    assertThat(reason(poison)).isEqualTo(DeadLetterReason.GAVE_UP.code());
    assertThat(detail(poison)).isEqualTo("the handler failed 3 times");
    assertThat(poison.getProps().getHeaders().get(DeadLetterHeaders.ATTEMPTS)).isEqualTo(3);
    assertThat(header(poison, DeadLetterHeaders.EXCEPTION_CLASS))
        .isEqualTo(IllegalStateException.class.getName());
    assertThat(header(poison, DeadLetterHeaders.EXCEPTION_MESSAGE))
        .isEqualTo("cannot apply a negative payment");
  }

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
