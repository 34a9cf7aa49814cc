package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.InboxRecord;
import dev.inbox.RecordState;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A handler that throws an {@link Error}, such as a {@link StackOverflowError}, has failed like one
 * that throws an exception: its attempt is counted and the key is free for a retry at once, rather
 * than held (in leased mode) until its lease ends.
 */
class HandlerErrorTest extends FilterTestBase {

  @ParameterizedTest
  @EnumSource(IdempotencyFilter.Mode.class)
  void a_handler_that_throws_an_error_fails_its_attempt_and_a_retry_runs_at_once(
      IdempotencyFilter.Mode mode) throws Exception {
    try (TestServer modal =
        new TestServer(
            inbox, dataSource, effects, 0, b -> b.mode(mode).inFlightWait(Duration.ofSeconds(1)))) {
      RawHttp.Response failed =
          RawHttp.post(modal.port(), "/payments", "key-a", "err-1", "100", "X-Fail: error");
      assertThat(failed.status()).as("the container's answer to the error").isEqualTo(500);
      assertThat(inbox.admin().find("tenant-a", "err-1"))
          .as("the failed attempt")
          .hasValueSatisfying(
              r -> {
                assertThat(r.state()).isEqualTo(RecordState.FAILED);
                assertThat(r.attempts()).isEqualTo(1);
                assertThat(r.lastError()).contains("StackOverflowError");
              });

      RawHttp.Response retry = RawHttp.post(modal.port(), "/payments", "key-a", "err-1", "100");
      assertThat(retry.status()).as(retry.body()).isEqualTo(201);
      assertThat(retry.replayed()).isFalse();
      assertThat(modal.runs).as("handler runs").hasValue(2);
      assertThat(inbox.admin().find("tenant-a", "err-1").map(InboxRecord::state))
          .contains(RecordState.COMPLETED);
      if (mode == IdempotencyFilter.Mode.TRANSACTIONAL) {
        assertThat(effects.count())
            .as("effect rows: the failed attempt's rolled back")
            .isEqualTo(1);
      }
    }
  }
}
