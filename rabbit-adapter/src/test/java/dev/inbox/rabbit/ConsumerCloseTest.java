package dev.inbox.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.inbox.Inbox;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link InboxRabbitConsumer#close()} on the real broker. */
class ConsumerCloseTest extends RabbitTestSupport {

  /**
   * A shutdown under an executor's {@code shutdownNow()} calls close() on an interrupted thread.
   * The batch in flight must still end before the channels close: else its ack fails, the broker
   * requeues its delivery and the next consumer dead-letters it a second time.
   */
  @Test
  void closeOnAnInterruptedThreadWaitsForTheBatchInFlightSoItsDeliveryIsDeadLetteredOnce()
      throws Exception {
    Inbox inbox = inbox(settings().maxAttempts(1).build());
    CountDownLatch inHandler = new CountDownLatch(1);
    InboxRabbitConsumer first =
        started(
            consumerWithoutHandler(inbox, connection)
                .handler(
                    (delivery, tx) -> {
                      inHandler.countDown();
                      Thread.sleep(2_000); // a slow handler: still running when close() comes
                      throw new IllegalStateException("cannot apply this payment");
                    }));
    try (Channel channel = connection.createChannel()) {
      publish(channel, "poison-1", "7");
    }
    assertThat(inHandler.await(30, TimeUnit.SECONDS)).as("the handler started").isTrue();
    Thread worker = workerThread();

    Thread.currentThread().interrupt();
    first.close();
    boolean workerAliveAfterClose = worker.isAlive();
    boolean interruptedAfterClose = Thread.interrupted();

    worker.join(60_000);
    InboxRabbitConsumer second = started(consumer(inbox, connection));
    await("the queue to be empty", Duration.ofSeconds(30), () -> readyMessages(queue.queue()) == 0);
    second.close();
    assertThat(readyMessages(queue.deadLetterQueue())).as("dead letters").isEqualTo(1);
    assertThat(readyMessages(queue.queue())).as("deliveries back in the queue").isZero();
    assertThat(workerAliveAfterClose).as("the worker alive after close() returned").isFalse();
    assertThat(interruptedAfterClose).as("the caller's interrupt flag after close()").isTrue();
  }

  private Thread workerThread() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(thread -> thread.getName().equals("inbox-rabbit-" + queue.queue()))
        .findFirst()
        .orElseThrow();
  }
}
