package dev.inbox.testing.acceptance;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.testing.Await;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.PaymentStream;
import dev.inbox.testing.TestDataSources;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What every broker adapter must do, written once: each message takes effect exactly once however
 * often it is sent, a consumer killed with {@code kill -9} mid-stream loses and doubles nothing,
 * and a poison message, a non-retryable failure and an invalid key are each dead-lettered with
 * their reason while the other messages take effect once. Every scenario runs with a per-item and
 * with a set-based handler ({@link HandlerKind}), and counts exactly: a doubled effect is a second
 * row in the {@link EffectsTable}, which has no unique constraint.
 *
 * <p>An adapter's test extends this class and implements {@link #fixture}. The reasons are checked
 * as the codes on the wire ({@code gave_up}, {@code non_retryable}, {@code invalid_key}), the
 * contract that a dead letter's reader relies on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ConsumerAcceptanceSuite {
  /** The inbox's {@code maxAttempts} in every fixture. */
  public static final int MAX_ATTEMPTS = 3;

  private static final Duration TIMEOUT = Duration.ofSeconds(90);

  private HikariDataSource dataSource;
  private EffectsTable effects;
  private ConsumerFixture fixture;
  private final List<AutoCloseable> consumers = new ArrayList<>();

  /**
   * The fixture of one test, on a new topic or queue, with its inbox in {@code schema}; the schema
   * is empty but for the effects table.
   */
  protected abstract ConsumerFixture fixture(DataSource dataSource, String schema) throws Exception;

  @BeforeAll
  void openDataSource() {
    dataSource = TestDataSources.pool(20);
  }

  @AfterAll
  void closeDataSource() {
    dataSource.close();
  }

  @BeforeEach
  void openFixture() throws Exception {
    String schema = TestDataSources.newSchema("acceptance");
    effects = new EffectsTable(dataSource, schema);
    effects.create();
    fixture = fixture(dataSource, schema);
  }

  @AfterEach
  void closeFixture() throws Exception {
    for (int i = consumers.size() - 1; i >= 0; i--) {
      consumers.get(i).close();
    }
    consumers.clear();
    fixture.close();
  }

  @ParameterizedTest(name = "{0} handler")
  @EnumSource(HandlerKind.class)
  void tenThousandMessagesWithTwentyPercentResentTakeEightThousandEffects(HandlerKind kind)
      throws Exception {
    PaymentStream stream = new PaymentStream("p", 8_000, 2_000, 42);
    Map<String, Long> sends =
        stream.messages().stream()
            .collect(Collectors.groupingBy(PaymentStream.Message::key, Collectors.counting()));
    assertThat(sends.values()).as("times each key is sent").contains(1L, 2L, 3L);
    fixture.publish(stream.messages());
    Payments payments = payments();

    drain(startConsumer(kind, payments), stream.distinct(), 0);

    assertExactlyOnce(stream.distinct(), stream.expectedSum());
    assertThat(fixture.counted("new")).as("counted new").isEqualTo(8_000);
    assertThat(fixture.counted("duplicate")).as("counted duplicate").isEqualTo(2_000);
    if (kind == HandlerKind.AT_ONCE) {
      assertThat(payments.largestCall()).as("messages in the largest call").isGreaterThan(1);
      assertThat(payments.calls()).as("calls").isLessThan(8_000);
    }
  }

  @ParameterizedTest(name = "{0} handler")
  @EnumSource(HandlerKind.class)
  void aConsumerKilledWithSigkillMidStreamLosesAndDoublesNothing(HandlerKind kind)
      throws Exception {
    PaymentStream stream = new PaymentStream("c", 8_000, 2_000, 11);
    fixture.publish(stream.messages());

    for (long threshold : new long[] {1_500, 4_500}) {
      try (ChildJvm child = fixture.startChild(kind)) {
        Await.until(threshold + " effects", TIMEOUT, () -> effects.count() >= threshold);
        System.out.printf("killing the child at %d effects (%s)%n", effects.count(), Instant.now());
        child.kill9();
      }
    }
    try (ChildJvm last = fixture.startChild(kind)) {
      awaitEffectsAndNothingUnsettled(stream.distinct());
      assertExactlyOnce(stream.distinct(), stream.expectedSum());
    }
  }

  @ParameterizedTest(name = "{0} handler")
  @EnumSource(HandlerKind.class)
  void aPoisonMessageIsDeadLetteredAfterMaxAttemptsAndTheRestTakeEffectOnce(HandlerKind kind)
      throws Exception {
    List<PaymentStream.Message> messages =
        paymentsWith(
            300,
            Map.of(
                40, new PaymentStream.Message("poison-1", Payments.POISON),
                299, new PaymentStream.Message("ok-7", 8))); // a re-send
    // Published before the consumer starts, so that the poison arrives among other messages.
    fixture.publish(messages);
    Payments payments = payments();

    List<DeadLetter> letters = drain(startConsumer(kind, payments), 300, 1);

    assertExactlyOnce(300, sumOfOneTo(300));
    assertThat(letters)
        .containsExactly(
            new DeadLetter(
                "poison-1",
                Long.toString(Payments.POISON),
                fixture.source(),
                "gave_up",
                "the handler failed " + MAX_ATTEMPTS + " times",
                "poison-1",
                MAX_ATTEMPTS,
                IllegalStateException.class.getName(),
                Payments.POISON_MESSAGE));
    if (kind == HandlerKind.AT_ONCE) {
      assertThat(payments.largestFailingCall())
          .as("messages in the largest call with the poison")
          .isGreaterThan(1);
    }
  }

  /**
   * One attempt is counted of the {@link #MAX_ATTEMPTS} allowed: the inbox's count, since a
   * set-based handler may run twice within one attempt when its batch is run again item by item.
   */
  @ParameterizedTest(name = "{0} handler")
  @EnumSource(HandlerKind.class)
  void aMessageWhoseHandlerThrowsNonRetryableIsDeadLetteredAtOnce(HandlerKind kind)
      throws Exception {
    fixture.publish(
        paymentsWith(100, Map.of(30, new PaymentStream.Message("closed-1", Payments.REJECTED))));
    Payments payments = payments();

    List<DeadLetter> letters = drain(startConsumer(kind, payments), 100, 1);

    assertExactlyOnce(100, sumOfOneTo(100));
    assertThat(fixture.attempts("closed-1")).as("attempts counted in the inbox").isEqualTo(1);
    assertThat(letters)
        .containsExactly(
            new DeadLetter(
                "closed-1",
                Long.toString(Payments.REJECTED),
                fixture.source(),
                "non_retryable",
                Payments.REJECTED_MESSAGE,
                "closed-1",
                1,
                fixture.nonRetryable("").getClass().getName(),
                Payments.REJECTED_MESSAGE));
    if (kind == HandlerKind.AT_ONCE) {
      assertThat(payments.largestFailingCall())
          .as("messages in the largest call with the rejected one")
          .isGreaterThan(1);
    }
  }

  @ParameterizedTest(name = "{0} handler")
  @EnumSource(HandlerKind.class)
  void messagesWithAnInvalidKeyAreDeadLetteredUnhandledAndTheRestTakeEffectOnce(HandlerKind kind)
      throws Exception {
    String control = "bad\u0001key";
    // No-break spaces: blank, and not trimmed as spaces around an idempotency-key header are.
    String blank = "\u00a0\u00a0";
    String tooLong = "x".repeat(256);
    fixture.publish(
        paymentsWith(
            100,
            Map.of(
                20, new PaymentStream.Message(control, 5),
                50, new PaymentStream.Message(blank, 6),
                80, new PaymentStream.Message(tooLong, 7))));
    Payments payments = payments();

    List<DeadLetter> letters = drain(startConsumer(kind, payments), 100, 3);

    assertExactlyOnce(100, sumOfOneTo(100));
    assertThat(letters).as("dead letters").hasSize(3);
    Map<String, DeadLetter> byKey =
        letters.stream().collect(Collectors.toMap(DeadLetter::originalKey, Function.identity()));
    assertThat(byKey).as("dead letters by key").containsOnlyKeys(control, blank, tooLong);
    for (DeadLetter letter : letters) {
      assertThat(letter.reason()).as("reason").isEqualTo("invalid_key");
      assertThat(letter.attempts()).as("attempts").isZero();
      assertThat(letter.origin()).as("origin").isEqualTo(fixture.source());
    }
    assertThat(byKey.get(control).payload()).isEqualTo("5");
    assertThat(byKey.get(control).detail()).contains("must not contain control characters");
    assertThat(byKey.get(blank).detail()).contains("must not be blank");
    assertThat(byKey.get(tooLong).detail()).contains("must be at most 255 characters");
  }

  /** A consumer in this JVM, stopped after the test at the latest. */
  private AutoCloseable startConsumer(HandlerKind kind, Payments payments) throws Exception {
    AutoCloseable consumer = fixture.startConsumer(kind, payments);
    consumers.add(consumer);
    return consumer;
  }

  private Payments payments() {
    return new Payments(effects, fixture::nonRetryable);
  }

  /**
   * Payments {@code ok-0} to {@code ok-<count - 1>} of 1 to {@code count}, each message of {@code
   * after} following the payment of its index.
   */
  private static List<PaymentStream.Message> paymentsWith(
      int count, Map<Integer, PaymentStream.Message> after) {
    List<PaymentStream.Message> messages = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      messages.add(new PaymentStream.Message("ok-" + i, i + 1));
      if (after.containsKey(i)) {
        messages.add(after.get(i));
      }
    }
    return messages;
  }

  private static long sumOfOneTo(long n) {
    return n * (n + 1) / 2;
  }

  /**
   * Waits for the effects and for the broker to have nothing left unsettled, takes the dead
   * letters, stops the consumer and checks that nothing came back: each message was settled after
   * its commit.
   */
  private List<DeadLetter> drain(AutoCloseable consumer, long effectCount, int deadLetterCount)
      throws Exception {
    awaitEffectsAndNothingUnsettled(effectCount);
    List<DeadLetter> letters =
        deadLetterCount == 0 ? List.of() : fixture.deadLetters(deadLetterCount);
    consumer.close();
    assertThat(fixture.unsettled()).as("messages unsettled once the consumer stopped").isZero();
    return letters;
  }

  private void awaitEffectsAndNothingUnsettled(long effectCount) throws Exception {
    Await.until(
        effectCount + " effects and nothing unsettled",
        TIMEOUT,
        () -> effects.count() >= effectCount && fixture.unsettled() == 0);
  }

  /** Exactly one effect per distinct key, and the exact sum. */
  private void assertExactlyOnce(long distinct, long expectedSum) throws Exception {
    assertThat(effects.count()).as("effects").isEqualTo(distinct);
    assertThat(effects.distinctKeys()).as("distinct keys").isEqualTo(distinct);
    assertThat(effects.sum()).as("sum of amounts").isEqualTo(expectedSum);
  }
}
