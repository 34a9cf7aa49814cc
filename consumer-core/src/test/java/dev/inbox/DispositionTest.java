package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.Disposition.Action;
import dev.inbox.internal.HandlerError;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The adjudication table: every outcome of a message and what it means for a transport. */
class DispositionTest {
  private static final int MAX_ATTEMPTS = 3;
  private static final IllegalStateException BOOM = new IllegalStateException("boom");
  private static final NonRetryableException REFUSED = new NonRetryableException("refused");

  private static ItemResult<String> result(ItemStatus status, int attempts, Throwable failure) {
    return new ItemResult<>(BatchItem.of("k-1", "payload"), status, attempts, null, failure, null);
  }

  static Stream<Arguments> table() {
    return Stream.of(
        // status, attempts, failure, action, reason
        Arguments.of(ItemStatus.COMPLETED, 1, null, Action.SETTLE, null),
        Arguments.of(ItemStatus.DUPLICATE, 1, null, Action.SETTLE, null),
        Arguments.of(ItemStatus.MISMATCH, 1, null, Action.DEAD_LETTER, DeadLetterReason.MISMATCH),
        Arguments.of(ItemStatus.GAVE_UP, 3, null, Action.DEAD_LETTER, DeadLetterReason.GAVE_UP),
        Arguments.of(ItemStatus.FAILED, 1, BOOM, Action.RETRY, null),
        Arguments.of(ItemStatus.FAILED, 2, BOOM, Action.RETRY, null),
        Arguments.of(ItemStatus.FAILED, 3, BOOM, Action.DEAD_LETTER, DeadLetterReason.GAVE_UP),
        Arguments.of(ItemStatus.FAILED, 4, BOOM, Action.DEAD_LETTER, DeadLetterReason.GAVE_UP),
        Arguments.of(
            ItemStatus.FAILED, 1, REFUSED, Action.DEAD_LETTER, DeadLetterReason.NON_RETRYABLE),
        Arguments.of(
            ItemStatus.FAILED, 3, REFUSED, Action.DEAD_LETTER, DeadLetterReason.NON_RETRYABLE),
        Arguments.of(ItemStatus.IN_PROGRESS, 1, null, Action.RETRY, null),
        Arguments.of(ItemStatus.NOT_ATTEMPTED, 0, null, Action.RETRY, null));
  }

  @ParameterizedTest(name = "{0} after {1} attempts, failure {2}: {3} {4}")
  @MethodSource("table")
  void every_outcome_has_one_disposition(
      ItemStatus status, int attempts, Throwable failure, Action action, DeadLetterReason reason) {
    Disposition disposition = Disposition.of(result(status, attempts, failure), MAX_ATTEMPTS);
    assertThat(disposition.action()).isEqualTo(action);
    assertThat(disposition.reason()).isEqualTo(reason);
    assertThat(disposition.key()).isEqualTo("k-1");
    assertThat(disposition.attempts()).isEqualTo(attempts);
  }

  @Test
  void every_item_status_is_in_the_table() {
    assertThat(table().map(arguments -> arguments.get()[0]).distinct())
        .containsExactlyInAnyOrder((Object[]) ItemStatus.values());
  }

  @Test
  void the_reasons_keep_their_lower_case_wire_strings() {
    assertThat(Stream.of(DeadLetterReason.values()).map(DeadLetterReason::code))
        .containsExactly("invalid_key", "undeserializable", "mismatch", "gave_up", "non_retryable");
  }

  @Test
  void a_dead_letter_says_why_in_a_sentence_and_names_the_last_exception() {
    Disposition gaveUp = Disposition.of(result(ItemStatus.FAILED, 3, BOOM), MAX_ATTEMPTS);
    assertThat(gaveUp.detail()).isEqualTo("the handler failed 3 times");
    assertThat(gaveUp.failure()).isSameAs(BOOM);

    Disposition refused = Disposition.of(result(ItemStatus.FAILED, 1, REFUSED), MAX_ATTEMPTS);
    assertThat(refused.detail()).isEqualTo("refused");
    assertThat(refused.failure()).isSameAs(REFUSED);

    Disposition mismatch = Disposition.of(result(ItemStatus.MISMATCH, 1, null), MAX_ATTEMPTS);
    assertThat(mismatch.detail()).isEqualTo("the key was used before with a different payload");
    assertThat(mismatch.failure()).isNull();

    Disposition settled = Disposition.of(result(ItemStatus.COMPLETED, 1, null), MAX_ATTEMPTS);
    assertThat(settled.detail()).isNull();
  }

  @Test
  void an_error_a_handler_threw_is_unwrapped_and_counts_like_any_failure() {
    StackOverflowError overflow = new StackOverflowError();
    HandlerError wrapped = new HandlerError(overflow);
    assertThat(Disposition.of(result(ItemStatus.FAILED, 1, wrapped), MAX_ATTEMPTS).failure())
        .isSameAs(overflow);
    Disposition gaveUp = Disposition.of(result(ItemStatus.FAILED, 3, wrapped), MAX_ATTEMPTS);
    assertThat(gaveUp.reason()).isEqualTo(DeadLetterReason.GAVE_UP);
    assertThat(gaveUp.failure()).isSameAs(overflow);
  }

  @Test
  void the_transports_count_of_deliveries_counts_toward_max_attempts() {
    Disposition byBroker = Disposition.of(result(ItemStatus.FAILED, 1, BOOM), MAX_ATTEMPTS, 4);
    assertThat(byBroker.action()).isEqualTo(Action.DEAD_LETTER);
    assertThat(byBroker.reason()).isEqualTo(DeadLetterReason.GAVE_UP);
    assertThat(byBroker.attempts()).isEqualTo(4);
    assertThat(Disposition.of(result(ItemStatus.FAILED, 1, BOOM), MAX_ATTEMPTS, 2).action())
        .isEqualTo(Action.RETRY);
    assertThat(Disposition.of(result(ItemStatus.FAILED, 2, BOOM), MAX_ATTEMPTS, 0).attempts())
        .isEqualTo(2);
  }

  @Test
  void failures_before_the_claim_are_dead_lettered_with_no_attempt() {
    Disposition missing = Disposition.invalidKey("the delivery has no messageId");
    assertThat(missing.action()).isEqualTo(Action.DEAD_LETTER);
    assertThat(missing.reason()).isEqualTo(DeadLetterReason.INVALID_KEY);
    assertThat(missing.detail()).isEqualTo("the delivery has no messageId");
    assertThat(missing.key()).isNull();
    assertThat(missing.attempts()).isZero();
    assertThat(missing.failure()).isNull();

    IllegalArgumentException extractor = new IllegalArgumentException("not valid UTF-8");
    Disposition thrown = Disposition.invalidKey(extractor);
    assertThat(thrown.reason()).isEqualTo(DeadLetterReason.INVALID_KEY);
    assertThat(thrown.detail()).isEqualTo("the key extractor failed: not valid UTF-8");
    assertThat(thrown.failure()).isSameAs(extractor);

    StackOverflowError deserializer = new StackOverflowError();
    Disposition undeserializable =
        Disposition.undeserializable("cannot deserialize the value", deserializer);
    assertThat(undeserializable.action()).isEqualTo(Action.DEAD_LETTER);
    assertThat(undeserializable.reason()).isEqualTo(DeadLetterReason.UNDESERIALIZABLE);
    assertThat(undeserializable.detail()).isEqualTo("cannot deserialize the value");
    assertThat(undeserializable.failure()).isSameAs(deserializer);
    assertThat(undeserializable.attempts()).isZero();
  }

  @Test
  void work_done_outside_the_inbox_is_settled_or_retried() {
    assertThat(Disposition.settled().action()).isEqualTo(Action.SETTLE);
    Disposition retry = Disposition.retry(BOOM);
    assertThat(retry.action()).isEqualTo(Action.RETRY);
    assertThat(retry.reason()).isNull();
    assertThat(retry.failure()).isSameAs(BOOM);
  }

  @Test
  void max_attempts_must_be_positive() {
    assertThatThrownBy(() -> Disposition.of(result(ItemStatus.FAILED, 1, BOOM), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxAttempts must be at least 1, but was 0");
  }
}
