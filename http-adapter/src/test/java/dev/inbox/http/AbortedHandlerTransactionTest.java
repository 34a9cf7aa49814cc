package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.InboxRecord;
import dev.inbox.RecordState;
import org.junit.jupiter.api.Test;

/**
 * A handler that catches an SQL error with no savepoint and answers 201: PostgreSQL has aborted the
 * request's transaction, so nothing of it commits, and the completion says so. The client must not
 * be told that the payment went through, and the attempt counts as failed, like a handler that
 * throws.
 */
class AbortedHandlerTransactionTest extends FilterTestBase {

  @Test
  void a_handler_that_swallows_an_sql_error_gets_500_and_a_retry_runs_exactly_once()
      throws Exception {
    RawHttp.Response answer =
        RawHttp.post(server.port(), "/payments", "key-a", "ab-1", "100", "X-Fail: swallow");

    assertProblem(answer, 500, "internal-error", "retry with the same Idempotency-Key");
    assertThat(answer.replayed()).isFalse();
    assertThat(answer.body()).doesNotContain("SQL").doesNotContain("25P02");
    assertThat(effects.count()).as("effect rows of the aborted transaction").isZero();
    assertThat(inbox.admin().find("tenant-a", "ab-1"))
        .as("the attempt is counted as failed")
        .hasValueSatisfying(
            r -> {
              assertThat(r.state()).isEqualTo(RecordState.FAILED);
              assertThat(r.attempts()).isEqualTo(1);
            });

    RawHttp.Response retry = RawHttp.post(server.port(), "/payments", "key-a", "ab-1", "100");
    RawHttp.Response again = RawHttp.post(server.port(), "/payments", "key-a", "ab-1", "100");

    assertThat(retry.status()).as(retry.body()).isEqualTo(201);
    assertThat(retry.replayed()).isFalse();
    assertThat(again.replayed()).isTrue();
    assertThat(server.runs).as("handler runs").hasValue(2);
    assertThat(effects.count()).as("effect rows after the retry").isEqualTo(1);
    assertThat(inbox.admin().find("tenant-a", "ab-1").map(InboxRecord::state))
        .contains(RecordState.COMPLETED);
  }
}
