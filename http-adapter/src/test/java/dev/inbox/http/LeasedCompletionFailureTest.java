package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.Inbox;
import dev.inbox.RecordState;
import dev.inbox.http.spi.IdempotencyListener;
import dev.inbox.http.spi.RequestOutcome;
import java.io.ByteArrayOutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leased mode, where the handler's effect is outside the database: the handler succeeded, and then
 * the database refuses the completion that records its result. The effect has happened, so the
 * client must never be told to retry it, or its retry runs the payment again once the lease ends.
 */
class LeasedCompletionFailureTest extends FilterTestBase {
  private static final Duration LEASE = Duration.ofSeconds(4);

  private final List<RequestOutcome> outcomes = new CopyOnWriteArrayList<>();
  private SwitchableDataSource database;
  private Inbox leasedInbox;
  private TestServer leased;
  private int closedPort;

  @BeforeEach
  void startLeased() throws Exception {
    outcomes.clear();
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    database = new SwitchableDataSource(dataSource);
    leasedInbox =
        Inbox.builder()
            .dataSource(database)
            .settings(
                FilterTestBase.settings(schema)
                    .lockTimeout(Duration.ofSeconds(1))
                    .leaseDuration(LEASE)
                    .build())
            .build();
    IdempotencyListener listener =
        new IdempotencyListener() {
          @Override
          public void answered(RequestOutcome outcome, Duration addedLatency) {
            outcomes.add(outcome);
          }
        };
    // The handler writes its effect through the test's own pool, which stays up: the effect
    // happens, only the inbox's completion meets the refusing database.
    leased =
        new TestServer(
            leasedInbox,
            dataSource,
            effects,
            0,
            b ->
                b.mode(IdempotencyFilter.Mode.LEASED)
                    .inFlightWait(Duration.ofSeconds(1))
                    .listener(listener));
  }

  @AfterEach
  void stopLeased() throws Exception {
    leased.close();
    leasedInbox.close();
  }

  @Test
  void a_result_that_cannot_be_recorded_gets_the_handlers_answer_and_the_payment_runs_once()
      throws Exception {
    CompletableFuture<RawHttp.Response> first =
        postInBackground(leased.port(), "/payments?gate=1", "lease-1");
    await("the handler's effect is committed", () -> effects.count() == 1);
    database.target = SwitchableDataSource.refusing(closedPort, null);
    leased.gate.countDown();

    ByteArrayOutputStream log = new ByteArrayOutputStream();
    RawHttp.Response answer = capturingStandardError(log, () -> first.get(60, TimeUnit.SECONDS));
    database.target = dataSource;
    RawHttp.Response settled = followUntilSettled(answer, "/payments?gate=1", "lease-1");

    assertThat(effects.count())
        .as("effect rows when the client follows the answer it got")
        .isEqualTo(1);
    assertThat(answer.status()).as(answer.body()).isEqualTo(201);
    assertThat(answer.body()).isEqualTo("paid €100 for tenant-a in run 1");
    assertThat(answer.replayed()).isFalse();
    assertThat(settled).isSameAs(answer);
    // The filter reports an outcome after the response is written.
    await("the request is counted", () -> !outcomes.isEmpty());
    assertThat(outcomes).containsExactly(RequestOutcome.NOT_RECORDED);
    String logged = log.toString(StandardCharsets.UTF_8);
    assertThat(logged)
        .as("the server log")
        .contains("ERROR")
        .contains("'lease-1'")
        .contains("'tenant-a'")
        .contains("could not be recorded")
        .contains("would run it again");
  }

  @Test
  void a_database_that_comes_back_while_the_completion_is_retried_records_the_result()
      throws Exception {
    CompletableFuture<RawHttp.Response> first =
        postInBackground(leased.port(), "/payments?gate=1", "lease-2");
    await("the handler's effect is committed", () -> effects.count() == 1);
    database.target = SwitchableDataSource.refusing(closedPort, null);
    int asked = database.connectionsAsked.get();
    leased.gate.countDown();
    await(
        "the completion was refused twice",
        () -> database.connectionsAsked.get() >= asked + 2 || first.isDone());
    database.target = dataSource;

    RawHttp.Response answer = first.get(60, TimeUnit.SECONDS);
    RawHttp.Response retry =
        RawHttp.post(leased.port(), "/payments?gate=1", "key-a", "lease-2", "100");

    assertThat(answer.status()).as(answer.body()).isEqualTo(201);
    assertThat(retry.status()).as(retry.body()).isEqualTo(201);
    assertThat(retry.replayed()).as("the retry is replayed").isTrue();
    assertThat(retry.body()).isEqualTo(answer.body());
    assertThat(effects.count()).as("effect rows").isEqualTo(1);
    assertThat(leasedInbox.admin().find("tenant-a", "lease-2"))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.COMPLETED));
    await("both requests are counted", () -> outcomes.size() == 2);
    assertThat(outcomes).containsExactly(RequestOutcome.FRESH, RequestOutcome.REPLAYED);
  }

  /**
   * Does what a well-behaved client does with the answer: a 409 or 503 is retried with the same key
   * after its {@code Retry-After}, until another answer comes or a minute has passed.
   */
  private RawHttp.Response followUntilSettled(RawHttp.Response answer, String target, String key)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while ((answer.status() == 409 || answer.status() == 503) && System.nanoTime() - deadline < 0) {
      long seconds = Long.parseLong(answer.header("Retry-After").orElse("1"));
      Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
      answer = RawHttp.post(leased.port(), target, "key-a", key, "100");
    }
    return answer;
  }
}
