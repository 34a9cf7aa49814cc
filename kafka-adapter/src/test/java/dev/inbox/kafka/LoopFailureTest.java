package dev.inbox.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.DeadLetterHeaders;
import dev.inbox.Inbox;
import dev.inbox.kafka.spi.KafkaConsumerListener;
import dev.inbox.spi.MessageOutcome;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** An {@link Error} in a handler, and anything the loop cannot handle, on the real broker. */
class LoopFailureTest extends KafkaTestSupport {

  @Test
  void aStackOverflowInTheHandlerIsAFailedAttemptAndTheRecordIsDeadLetteredAfterMaxAttempts()
      throws Exception {
    String topic = kafka.newTopic("overflow", 1);
    String group = newGroup();
    List<ProducerRecord<String, String>> records = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      records.add(withKey(topic, "ok-" + i, "1"));
      if (i == 5) {
        records.add(withKey(topic, "overflow-1", "7"));
      }
    }
    sendAll(records);

    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox(settings().maxAttempts(3).build()), topic, group)
            .retryBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .handler(
                (record, tx) -> {
                  if (record.key().equals("overflow-1")) {
                    recurse(0);
                  }
                  effects.apply(tx, record.key(), Long.parseLong(record.value()));
                })
            .build()
            .start();
    closeables.add(consumer);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(20);
    assertThat(effects.sum()).as("sum").isEqualTo(20);
    Map<String, Map<String, String>> letters = readDeadLetters(topic + ".DLT", 1);
    assertThat(letters).hasSize(1);
    assertThat(letters.get("overflow-1"))
        .containsEntry(DeadLetterHeaders.REASON, "gave_up")
        .containsEntry(DeadLetterHeaders.ATTEMPTS, "3")
        .containsEntry(DeadLetterHeaders.EXCEPTION_CLASS, StackOverflowError.class.getName());
    assertThat(consumer.isRunning()).isTrue();
    assertThat(consumer.failure()).isEmpty();
  }

  /**
   * The listener is called while a partition is settled and after each poll: an exception there
   * must neither fail the partition (which would read it again, forever) nor stop the loop.
   */
  @Test
  void aListenerThatThrowsOnEveryCallStopsNothingAndEachRecordTakesEffectOnce() throws Exception {
    String topic = kafka.newTopic("listener-throws", 1);
    String group = newGroup();
    ProducerRecord<String, String> blankKey = new ProducerRecord<>(topic, "blank", "5");
    blankKey.headers().add("idempotency-key", " ".getBytes(StandardCharsets.UTF_8));
    sendAll(
        List.of(
            withKey(topic, "pay-1", "1"),
            withKey(topic, "pay-2", "2"),
            withKey(topic, "pay-1", "1"),
            blankKey));
    Set<String> called = ConcurrentHashMap.newKeySet();
    KafkaConsumerListener broken =
        new KafkaConsumerListener() {
          @Override
          public void records(String topic, MessageOutcome outcome, int count) {
            called.add(outcome.name());
            throw new IllegalArgumentException("a registry refused the meter");
          }

          @Override
          public void batch(Duration latency) {
            called.add("batch");
            throw new IllegalArgumentException("a registry refused the meter");
          }
        };
    InboxKafkaConsumer<String, String> consumer =
        consumer(inbox(settings().build()), topic, group)
            .listener(broken)
            .handler(
                (record, tx) -> effects.apply(tx, record.key(), Long.parseLong(record.value())))
            .build()
            .start();
    closeables.add(consumer);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));

    assertThat(effects.count()).as("effects").isEqualTo(2);
    assertThat(effects.sum()).as("sum").isEqualTo(3);
    assertThat(readDeadLetters(topic + ".DLT", 1).get("blank"))
        .containsEntry(DeadLetterHeaders.REASON, "invalid_key");
    await(
        "the listener to be called for the poll",
        Duration.ofSeconds(10),
        () -> called.contains("batch"));
    assertThat(called)
        .as("listener calls, each of which threw")
        .contains("NEW", "DUPLICATE", "DEAD_LETTERED");
    assertThat(consumer.isRunning()).isTrue();
    assertThat(consumer.failure()).isEmpty();
  }

  @Test
  void anErrorTheLoopCannotHandleClosesTheConsumerSoThatAnotherOneGetsTheRecord() throws Exception {
    String topic = kafka.newTopic("extractor-error", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    AtomicBoolean broken = new AtomicBoolean(true);
    KeyExtractor<String, String> keys = KeyExtractor.headerOrCoordinates();
    Throwable failure =
        stopsVisiblyAndAnotherMemberTakesOver(
            consumer(inbox, topic, group)
                .keyExtractor(
                    record -> {
                      if (broken.getAndSet(false)) {
                        throw new LinkageError("the key extractor's class failed to load");
                      }
                      return keys.keyOf(record);
                    }),
            inbox,
            topic,
            group);
    assertThat(failure).isInstanceOf(LinkageError.class);
  }

  @Test
  void anUnexpectedExceptionFromPollClosesTheConsumerSoThatAnotherOneGetsTheRecord()
      throws Exception {
    String topic = kafka.newTopic("poll-failure", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    Throwable failure =
        stopsVisiblyAndAnotherMemberTakesOver(
            failingFirstPollWithRecords(consumer(inbox, topic, group)), inbox, topic, group);
    assertThat(failure)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("injected poll failure");
  }

  /**
   * A static member (group.instance.id) keeps its partitions across a restart until its session
   * times out, which is the point of static membership; but a member that stopped on a failure will
   * not come back, so it must leave the group at once.
   */
  @Test
  void aStaticMemberThatStopsOnAFailureLeavesItsGroupSoThatAnotherMemberTakesOverAtOnce()
      throws Exception {
    String topic = kafka.newTopic("static-failure", 1);
    String group = newGroup();
    Inbox inbox = inbox(settings().build());
    Map<String, Object> staticMember = new HashMap<>(consumerProperties(group));
    staticMember.put("group.instance.id", group + "-static");
    // Both far beyond the wait for the takeover: only an explicit leave lets it happen in time.
    staticMember.put("session.timeout.ms", 300_000);
    staticMember.put("max.poll.interval.ms", 300_000);
    Throwable failure =
        stopsVisiblyAndAnotherMemberTakesOver(
            failingFirstPollWithRecords(consumer(inbox, topic, group).properties(staticMember)),
            inbox,
            topic,
            group);
    assertThat(failure).hasMessage("injected poll failure");
  }

  /**
   * Sends one payment, starts the failing loop and waits for it to report its failure once, then
   * starts a sound member of the same group: the payment takes effect exactly once.
   *
   * @return the reported failure
   */
  private Throwable stopsVisiblyAndAnotherMemberTakesOver(
      InboxKafkaConsumer.Builder<String, String> failing, Inbox inbox, String topic, String group)
      throws Exception {
    sendAll(List.of(withKey(topic, "pay-1", "100")));
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    InboxKafkaConsumer<String, String> first =
        failing
            .handler((record, tx) -> effects.apply(tx, record.key(), 100))
            .onFailure(reported::add)
            .build()
            .start();
    closeables.add(first);

    await("the failure to be reported", Duration.ofSeconds(60), () -> reported.size() == 1);
    assertThat(first.isRunning()).isFalse();
    assertThat(first.failure()).containsSame(reported.get(0));

    startConsumer(inbox, topic, group);
    awaitFullyCommitted(group, topic, Duration.ofSeconds(60));
    assertThat(effects.count()).as("effects").isEqualTo(1);
    assertThat(effects.sum()).as("sum").isEqualTo(100);
    assertThat(reported).as("failures reported").hasSize(1);
    return reported.get(0);
  }

  /**
   * The loop with a real consumer whose first poll that returns records throws what no Kafka client
   * documents, once it has joined the group and holds the partitions.
   */
  @SuppressWarnings("unchecked")
  private static InboxKafkaConsumer.Builder<String, String> failingFirstPollWithRecords(
      InboxKafkaConsumer.Builder<String, String> loop) {
    AtomicBoolean pollFails = new AtomicBoolean(true);
    return loop.consumerFactory(
        properties -> {
          Consumer<byte[], byte[]> real = new KafkaConsumer<>(properties);
          return (Consumer<byte[], byte[]>)
              Proxy.newProxyInstance(
                  Consumer.class.getClassLoader(),
                  new Class<?>[] {Consumer.class},
                  (proxy, method, args) -> {
                    Object result;
                    try {
                      result = method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                    if (method.getName().equals("poll")
                        && !((ConsumerRecords<?, ?>) result).isEmpty()
                        && pollFails.getAndSet(false)) {
                      throw new IllegalStateException("injected poll failure");
                    }
                    return result;
                  });
        });
  }

  private static int recurse(int depth) {
    return recurse(depth + 1) + 1;
  }
}
