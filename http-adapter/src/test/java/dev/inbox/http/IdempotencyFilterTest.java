package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.ItemStatus;
import dev.inbox.RecordState;
import dev.inbox.Storage;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.TestDataSources;
import dev.inbox.testing.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The filter in a real Jetty 12, called over real HTTP with the JDK's client. */
class IdempotencyFilterTest extends FilterTestBase {
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void hundred_concurrent_identical_requests_run_the_handler_once() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(100);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<HttpResponse<String>>> futures = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  return post("/payments?sleepMs=200", "key-a", "same-key", "250");
                }));
      }
      go.countDown();
      List<HttpResponse<String>> responses = new ArrayList<>();
      for (Future<HttpResponse<String>> future : futures) {
        responses.add(future.get(60, TimeUnit.SECONDS));
      }
      assertThat(server.runs).as("handler runs for 100 identical requests").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
      assertThat(responses).allMatch(r -> r.statusCode() == 201 || r.statusCode() == 409);
      List<HttpResponse<String>> created =
          responses.stream().filter(r -> r.statusCode() == 201).toList();
      assertThat(created).filteredOn(r -> !replayed(r)).as("fresh answers").hasSize(1);
      assertThat(created)
          .allSatisfy(r -> assertThat(r.body()).isEqualTo("paid €250 for tenant-a in run 1"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void missing_repeated_and_invalid_keys_get_400_with_problem_details_naming_the_rule()
      throws Exception {
    HttpResponse<String> missing = send(request("/payments", "key-a", "1").build());
    assertProblem(missing, 400, "idempotency-key-missing", "requires an Idempotency-Key header");
    // The body was never read, so the server drops the connection; clients must be told first.
    assertThat(missing.headers().firstValue("Connection")).hasValue("close");

    HttpResponse<String> repeated =
        send(
            request("/payments", "key-a", "1")
                .header("Idempotency-Key", "a")
                .header("Idempotency-Key", "b")
                .build());
    assertProblem(
        repeated, 400, "idempotency-key-repeated", "exactly one Idempotency-Key header, not 2");

    assertProblem(
        post("/payments", "key-a", "k".repeat(256), "1"),
        400,
        "idempotency-key-invalid",
        "Idempotency-Key must be at most 255 characters, but has 256");
    assertProblem(
        post("/payments", "key-a", "\"unterminated", "1"),
        400,
        "idempotency-key-invalid",
        "must end with a double quote");
    assertProblem(
        post("/payments", "key-a", "\"\"", "1"),
        400,
        "idempotency-key-invalid",
        "Idempotency-Key must not be empty");
    assertThat(server.runs).hasValue(0);
    assertThat(effects.count()).isZero();
  }

  @Test
  void quoted_and_bare_keys_name_the_same_key() throws Exception {
    HttpResponse<String> first = post("/payments", "key-a", "\"order-7\"", "5");
    HttpResponse<String> second = post("/payments", "key-a", "order-7", "5");
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(replayed(first)).isFalse();
    assertThat(replayed(second)).isTrue();
    assertThat(second.body()).isEqualTo(first.body());
    assertThat(server.runs).hasValue(1);
  }

  @Test
  void a_client_that_hangs_up_mid_body_claims_nothing_and_its_retry_runs_once() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: key-a\r\n"
                  + "Idempotency-Key: cut-short\r\nContent-Type: text/plain\r\n"
                  + "Content-Length: 1000\r\n\r\n12")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }
    // The filter reads the whole body before it claims, so the cut request leaves nothing behind.
    Thread.sleep(500);
    assertThat(server.runs).hasValue(0);
    assertThat(inbox.admin().find("tenant-a", "cut-short")).isEmpty();

    HttpResponse<String> retry = post("/payments", "key-a", "cut-short", "12");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(replayed(retry)).isFalse();
    assertThat(server.runs).hasValue(1);
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void the_same_key_with_another_body_gets_422() throws Exception {
    assertThat(post("/payments", "key-a", "k1", "100").statusCode()).isEqualTo(201);
    assertProblem(
        post("/payments", "key-a", "k1", "999"),
        422,
        "idempotency-key-mismatch",
        "was already used with a different request");
    assertThat(server.runs).hasValue(1);
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void two_tenants_with_the_same_key_get_two_executions_and_never_each_others_replay()
      throws Exception {
    HttpResponse<String> a = post("/payments", "key-a", "shared", "10");
    HttpResponse<String> b = post("/payments", "key-b", "shared", "10");
    assertThat(a.body()).isEqualTo("paid €10 for tenant-a in run 1");
    assertThat(b.body()).isEqualTo("paid €10 for tenant-b in run 2");
    assertThat(replayed(a)).isFalse();
    assertThat(replayed(b)).isFalse();
    HttpResponse<String> replayA = post("/payments", "key-a", "shared", "10");
    HttpResponse<String> replayB = post("/payments", "key-b", "shared", "10");
    assertThat(replayA.body()).isEqualTo(a.body());
    assertThat(replayB.body()).isEqualTo(b.body());
    assertThat(replayed(replayA) && replayed(replayB)).isTrue();
    assertThat(server.runs).hasValue(2);
    assertThat(effects.count()).isEqualTo(2);
    assertProblem(
        post("/payments", "unknown-api-key", "shared", "10"),
        401,
        "scope-unresolved",
        "no known client or tenant");
  }

  @Test
  void replay_keeps_status_allowed_headers_and_charset_but_never_cookies() throws Exception {
    HttpResponse<String> first = post("/payments", "key-a", "h1", "3");
    HttpResponse<String> replay = post("/payments", "key-a", "h1", "3");
    assertThat(first.headers().firstValue("Set-Cookie")).contains("session=secret");
    assertThat(first.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).isEqualToIgnoringCase("text/plain;charset=UTF-8"));
    assertThat(replay.statusCode()).isEqualTo(201);
    assertThat(replay.headers().firstValue("Location")).contains("/payments/h1");
    assertThat(replay.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).isEqualToIgnoringCase("text/plain;charset=UTF-8"));
    assertThat(replay.headers().firstValue("Set-Cookie")).isEmpty();
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(replay.body()).isEqualTo("paid €3 for tenant-a in run 1");
  }

  @Test
  void a_client_error_is_stored_and_replayed_without_running_again() throws Exception {
    HttpResponse<String> first = post("/payments?reject=400", "key-a", "r1", "1");
    HttpResponse<String> retry = post("/payments?reject=400", "key-a", "r1", "1");
    assertThat(first.statusCode()).isEqualTo(400);
    assertThat(retry.statusCode()).isEqualTo(400);
    assertThat(replayed(retry)).isTrue();
    assertThat(retry.body()).isEqualTo("rejected in run 1");
    assertThat(server.runs).hasValue(1);
  }

  @Test
  void a_server_error_is_not_stored_and_the_same_retry_runs_again() throws Exception {
    HttpResponse<String> failed =
        send(
            request("/payments", "key-a", "7")
                .header("Idempotency-Key", "e1")
                .header("X-Fail", "500")
                .build());
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(replayed(failed)).isFalse();
    assertThat(effects.count()).as("the handler's write was rolled back").isZero();
    assertThat(inbox.admin().find("tenant-a", "e1").map(InboxRecord::state))
        .contains(RecordState.FAILED);

    HttpResponse<String> retry = post("/payments", "key-a", "e1", "7");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(replayed(retry)).isFalse();
    assertThat(server.runs).hasValue(2);
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void a_redirect_after_the_write_is_the_final_answer_and_is_stored_and_replayed()
      throws Exception {
    HttpResponse<String> first = post("/payments?redirect=302", "key-a", "prg1", "7");
    HttpResponse<String> retry = post("/payments?redirect=302", "key-a", "prg1", "7");
    assertThat(first.statusCode()).isEqualTo(302);
    assertThat(first.headers().firstValue("Location"))
        .hasValueSatisfying(location -> assertThat(location).endsWith("/payments/prg1"));
    assertThat(effects.count()).as("the write behind the redirect").isEqualTo(1);
    assertThat(retry.statusCode()).isEqualTo(302);
    assertThat(replayed(retry)).isTrue();
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"));
    assertThat(server.runs).hasValue(1);
  }

  @Test
  void a_redirect_that_asks_for_the_same_request_elsewhere_rolls_back_and_releases_the_key()
      throws Exception {
    HttpResponse<String> moved = post("/payments?redirect=307", "key-a", "tr1", "7");
    assertThat(moved.statusCode()).isEqualTo(307);
    assertThat(effects.count()).as("the write was rolled back").isZero();
    assertThat(inbox.admin().find("tenant-a", "tr1").map(InboxRecord::state))
        .contains(RecordState.FAILED);
  }

  @Test
  void a_handler_that_goes_asynchronous_is_failed_and_its_empty_response_is_never_stored()
      throws Exception {
    HttpResponse<String> first = post("/payments/async", "key-a", "as1", "7");
    assertThat(first.statusCode()).isEqualTo(500);
    // The 500 leaves as the async cycle ends, just before the filter records the failure.
    await(
        "the key released, not completed with the response the chain returned with",
        () ->
            inbox
                .admin()
                .find("tenant-a", "as1")
                .map(InboxRecord::state)
                .equals(Optional.of(RecordState.FAILED)));

    HttpResponse<String> retry = post("/payments/async", "key-a", "as1", "7");
    assertThat(replayed(retry)).isFalse();
    assertThat(retry.statusCode()).isEqualTo(500);
    assertThat(server.runs).hasValue(2);
  }

  @Test
  void failures_that_fill_the_pool_are_still_counted() throws Exception {
    // Two requests hold both connections of the pool when they fail. Counting a failure takes a
    // connection of its own, so it must wait until the request's connection is back.
    try (HikariDataSource twoConnections = TestDataSources.pool(2)) {
      twoConnections.getHikariConfigMXBean().setConnectionTimeout(2_000);
      try (Inbox small =
              Inbox.builder()
                  .dataSource(twoConnections)
                  .settings(FilterTestBase.settings(schema).build())
                  .build();
          TestServer starved = new TestServer(small, twoConnections, effects, 0)) {
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (String key : List.of("full-1", "full-2")) {
          answers.add(
              client.sendAsync(
                  request(starved.uri("/payments?sleepMs=500"), "key-a", "5")
                      .header("Idempotency-Key", key)
                      .header("X-Fail", "500")
                      .build(),
                  HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> answer : answers) {
          assertThat(answer.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(500);
        }
        for (String key : List.of("full-1", "full-2")) {
          InboxRecord failed = small.admin().find("tenant-a", key).orElseThrow();
          assertThat(failed.state()).isEqualTo(RecordState.FAILED);
          assertThat(failed.attempts()).as("the counted attempts of " + key).isEqualTo(1);
        }
        assertThat(effects.count()).isZero();
      }
    }
  }

  @Test
  void a_handler_that_writes_through_the_inbox_connection_and_then_throws_leaves_no_row()
      throws Exception {
    // X-Fail is left out of the fingerprint: the retry below is the same request, and a failed
    // attempt's fingerprint sticks to its key.
    HttpResponse<String> failed =
        send(
            request("/payments", "key-a", "7")
                .header("Idempotency-Key", "t1")
                .header("X-Fail", "throw")
                .build());
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(effects.count()).as("the write through the inbox connection").isZero();
    InboxRecord released = inbox.admin().find("tenant-a", "t1").orElseThrow();
    assertThat(released.state())
        .as("the key is released, not completed")
        .isEqualTo(RecordState.FAILED);
    assertThat(released.lastError()).contains("the handler broke after its write");

    HttpResponse<String> retry = post("/payments", "key-a", "t1", "7");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(replayed(retry)).isFalse();
    assertThat(server.runs).hasValue(2);
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void a_serialization_failure_in_the_handler_is_not_counted_as_a_failed_attempt()
      throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> failed = post("/payments?fail=serialization", "key-a", "sf1", "7");
      assertThat(failed.statusCode()).isEqualTo(503);
    }
    assertThat(effects.count()).as("every write was rolled back").isZero();
    assertThat(inbox.admin().find("tenant-a", "sf1")).as("no attempt was counted").isEmpty();

    // The same contrast with a handler that throws for a reason of its own: that one is counted.
    assertThat(post("/payments?fail=throw", "key-a", "sf2", "7").statusCode()).isEqualTo(500);
    assertThat(inbox.admin().find("tenant-a", "sf2").map(InboxRecord::attempts)).contains(1);

    HttpResponse<String> retry = post("/payments", "key-a", "sf1", "7");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(replayed(retry)).isFalse();
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void the_handler_can_neither_commit_nor_close_the_inbox_transaction() throws Exception {
    assertThat(post("/payments?fail=commit", "key-a", "c1", "4").statusCode()).isEqualTo(500);
    assertThat(effects.count()).as("the handler's own commit was refused").isZero();

    HttpResponse<String> closing = post("/payments?close=1", "key-a", "c2", "4");
    assertThat(closing.statusCode()).as("close() is harmless").isEqualTo(201);
    assertThat(effects.count()).isEqualTo(1);
    assertThat(inbox.admin().find("tenant-a", "c2").map(InboxRecord::state))
        .contains(RecordState.COMPLETED);
  }

  @Test
  void an_oversize_response_is_completed_by_its_hash_and_never_run_again() throws Exception {
    HttpResponse<String> first = post("/payments?big=200000", "key-a", "big1", "1");
    HttpResponse<String> retry = post("/payments?big=200000", "key-a", "big1", "1");
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).hasSize(200_000);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(replayed(retry)).isTrue();
    assertThat(retry.headers().firstValue("Idempotent-Body-Stored")).contains("false");
    assertThat(retry.body()).isEmpty();
    assertThat(server.runs).hasValue(1);
    assertThat(effects.count()).isEqualTo(1);
    assertThat(inbox.admin().find("tenant-a", "big1").orElseThrow().result().bodyStored())
        .isFalse();
  }

  @Test
  void a_request_body_over_the_limit_gets_413_and_claims_nothing() throws Exception {
    try (TestServer small =
        new TestServer(inbox, dataSource, effects, 0, b -> b.maxRequestBody(16))) {
      HttpResponse<String> tooLarge =
          send(
              request(small.uri("/payments"), "key-a", "1".repeat(17))
                  .header("Idempotency-Key", "large")
                  .build());
      assertProblem(tooLarge, 413, "request-body-too-large", "larger than 16 bytes");
      assertThat(small.runs).hasValue(0);
      assertThat(inbox.admin().find("tenant-a", "large")).isEmpty();
    }
  }

  @Test
  void a_key_completed_by_a_consumer_without_a_stored_response_gets_the_fallback()
      throws Exception {
    // The same payment consumed first from Kafka, in the same scope: it stores no HTTP response.
    inbox.execute(
        "tenant-a",
        "pay-K",
        tx -> {
          effects.apply(tx, "pay-K", 50);
          return null;
        });
    HttpResponse<String> http = post("/payments", "key-a", "pay-K", "50");
    assertThat(http.statusCode()).isEqualTo(200);
    assertThat(replayed(http)).isTrue();
    assertThat(http.headers().firstValue("Content-Type")).contains("application/json");
    assertThat(http.body()).contains("\"status\":\"already-processed\"");
    assertThat(server.runs).hasValue(0);
    assertThat(effects.count()).as("one effect across both channels").isEqualTo(1);
  }

  @Test
  void a_consumer_that_records_the_key_while_the_first_request_runs_wins_and_is_replayed()
      throws Exception {
    assumeStorage(
        Storage.TABLE,
        "a consumer's claim takes the key guard's advisory lock, which is the request's"
            + " reservation, so it waits for the request (the next test)");
    CompletableFuture<HttpResponse<String>> first = paymentInsideItsHandler("pay-R");
    // The request holds the key by a lock that a consumer's batch claim does not look at.
    BatchResult<String> consumed = consumePayment(inbox, "pay-R");
    assertThat(consumed.count(ItemStatus.COMPLETED)).isEqualTo(1);

    HttpResponse<String> http = first.get(10, TimeUnit.SECONDS);
    assertThat(http.statusCode()).isEqualTo(200);
    assertThat(replayed(http)).isTrue();
    assertThat(http.body()).contains("\"status\":\"already-processed\"");
    assertThat(server.runs).as("the request's handler is not run again").hasValue(1);
    assertThat(effects.count()).as("only the consumer's effect").isEqualTo(1);
  }

  /** Sends a payment of 50 whose handler writes and then sleeps a second; returns once it wrote. */
  private CompletableFuture<HttpResponse<String>> paymentInsideItsHandler(String key)
      throws Exception {
    CompletableFuture<HttpResponse<String>> response =
        client.sendAsync(
            request("/payments?sleepMs=1000", "key-a", "50").header("Idempotency-Key", key).build(),
            HttpResponse.BodyHandlers.ofString());
    await("the request is inside its handler, its write made", () -> server.runs.get() == 1);
    return response;
  }

  /** The payment of 50 consumed from a broker, as a batch of one, in the request's scope. */
  private BatchResult<String> consumePayment(Inbox consumer, String key) {
    return consumer.executeBatch(
        "tenant-a",
        List.of(BatchItem.of(key, key)),
        BatchFailurePolicy.STOP,
        (item, tx) -> {
          effects.apply(tx, key, 50);
          return null;
        });
  }

  @Test
  void on_the_partitioned_storage_a_consumer_waits_for_the_request_that_holds_the_key()
      throws Exception {
    assumeStorage(Storage.PARTITIONED, "a consumer's claim does not wait for a reservation");
    CompletableFuture<HttpResponse<String>> first = paymentInsideItsHandler("pay-R");
    // The consumer's wait for the request is bounded by its lock timeout, not by this test.
    try (Inbox consumer = inbox(Duration.ofSeconds(25))) {
      BatchResult<String> consumed = consumePayment(consumer, "pay-R");
      assertThat(consumed.count(ItemStatus.DUPLICATE))
          .as("the consumer finds the key the request committed")
          .isEqualTo(1);
    }

    HttpResponse<String> http = first.get(10, TimeUnit.SECONDS);
    assertThat(http.statusCode()).isEqualTo(201);
    assertThat(replayed(http)).isFalse();
    assertThat(http.body()).isEqualTo("paid €50 for tenant-a in run 1");
    assertThat(effects.count()).as("only the request's effect").isEqualTo(1);
  }

  @Test
  void the_fallback_for_a_key_without_a_stored_response_is_configurable() throws Exception {
    inbox.execute("tenant-a", "pay-L", tx -> null);
    try (TestServer custom =
        new TestServer(
            inbox,
            dataSource,
            effects,
            0,
            b -> b.noStoredResponse(dev.inbox.StoredResult.of(204, new byte[0])))) {
      HttpResponse<String> http =
          send(
              request(custom.uri("/payments"), "key-a", "1")
                  .header("Idempotency-Key", "pay-L")
                  .build());
      assertThat(http.statusCode()).isEqualTo(204);
      assertThat(replayed(http)).isTrue();
    }
  }

  @Test
  void a_retry_while_the_first_runs_waits_and_gets_the_same_answer() throws Exception {
    CompletableFuture<HttpResponse<String>> first =
        client.sendAsync(
            request("/payments?sleepMs=1500", "key-a", "9").header("Idempotency-Key", "w1").build(),
            HttpResponse.BodyHandlers.ofString());
    await("the first request is inside its handler", () -> server.runs.get() == 1);
    HttpResponse<String> second = post("/payments?sleepMs=1500", "key-a", "w1", "9");
    assertThat(second.statusCode()).isEqualTo(201);
    assertThat(replayed(second)).isTrue();
    assertThat(second.body()).isEqualTo(first.get(10, TimeUnit.SECONDS).body());
    assertThat(server.runs).hasValue(1);
  }

  @Test
  void a_retry_past_the_wait_bound_gets_409_with_retry_after() throws Exception {
    // The retry polls the first request's reservation until the wait bound.
    try (Inbox impatientInbox = inbox(Duration.ofMillis(200));
        TestServer impatient =
            new TestServer(
                impatientInbox,
                dataSource,
                effects,
                0,
                b -> b.inFlightWait(Duration.ofMillis(200)).retryAfter(Duration.ofSeconds(2)))) {
      String slow = impatient.uri("/payments?sleepMs=3000");
      CompletableFuture<HttpResponse<String>> first =
          client.sendAsync(
              request(slow, "key-a", "4").header("Idempotency-Key", "c1").build(),
              HttpResponse.BodyHandlers.ofString());
      await("the first request is inside its handler", () -> impatient.runs.get() == 1);
      HttpResponse<String> second =
          send(request(slow, "key-a", "4").header("Idempotency-Key", "c1").build());
      assertProblem(second, 409, "request-in-progress", "still being processed");
      assertThat(second.headers().firstValue("Retry-After")).contains("2");
      assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
      assertThat(impatient.runs).hasValue(1);
      assertThat(effects.count()).isEqualTo(1);
    }
  }

  @Test
  void leased_mode_runs_once_replays_and_releases_a_failure() throws Exception {
    try (TestServer leased =
        new TestServer(inbox, dataSource, effects, 0, b -> b.mode(IdempotencyFilter.Mode.LEASED))) {
      String uri = leased.uri("/payments");
      HttpResponse<String> first =
          send(request(uri, "key-a", "8").header("Idempotency-Key", "l1").build());
      HttpResponse<String> retry =
          send(request(uri, "key-a", "8").header("Idempotency-Key", "l1").build());
      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(replayed(retry)).isTrue();
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(leased.runs).hasValue(1);

      HttpResponse<String> failed =
          send(
              request(uri, "key-a", "8")
                  .header("Idempotency-Key", "l2")
                  .header("X-Fail", "500")
                  .build());
      assertThat(failed.statusCode()).isEqualTo(500);
      assertThat(inbox.admin().find("tenant-a", "l2").map(InboxRecord::state))
          .contains(RecordState.FAILED);
      HttpResponse<String> again =
          send(request(uri, "key-a", "8").header("Idempotency-Key", "l2").build());
      assertThat(again.statusCode()).isEqualTo(201);
      assertThat(replayed(again)).isFalse();
      assertThat(leased.runs).hasValue(3);
    }
  }

  @Test
  void the_default_scope_is_the_principal_and_a_global_scope_must_be_chosen_explicitly()
      throws Exception {
    try (TestServer byPrincipal =
            new TestServer(
                inbox, dataSource, effects, 0, b -> b.scopeResolver(ScopeResolver.principal()));
        TestServer global =
            new TestServer(
                inbox,
                dataSource,
                effects,
                0,
                b -> b.scopeResolver(ScopeResolver.global("single-client")))) {
      HttpResponse<String> anonymous =
          send(
              request(byPrincipal.uri("/payments"), "key-a", "1")
                  .header("Idempotency-Key", "g1")
                  .build());
      assertProblem(anonymous, 401, "scope-unresolved", "no known client or tenant");
      HttpResponse<String> accepted =
          send(
              request(global.uri("/payments"), "no-such-api-key", "1")
                  .header("Idempotency-Key", "g1")
                  .build());
      assertThat(accepted.statusCode()).isEqualTo(201);
      assertThat(accepted.body()).isEqualTo("paid €1 for single-client in run 1");
      assertThat(byPrincipal.runs).hasValue(0);
    }
  }

  @Test
  void only_configured_methods_and_paths_are_protected_and_form_bodies_still_parse()
      throws Exception {
    HttpResponse<String> get =
        send(HttpRequest.newBuilder(URI.create(server.uri("/payments"))).GET().build());
    assertThat(get.statusCode()).as("GET needs no key").isEqualTo(200);

    HttpResponse<String> form =
        send(
            HttpRequest.newBuilder(URI.create(server.uri("/payments")))
                .header("X-Api-Key", "key-a")
                .header("Idempotency-Key", "form-1")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("amount=12&note=caf%C3%A9"))
                .build());
    assertThat(form.statusCode()).isEqualTo(201);
    assertThat(form.body()).isEqualTo("paid €12 for tenant-a in run 1");
    assertThat(effects.sum()).isEqualTo(12);
  }

  @Test
  void metrics_count_each_outcome_and_time_the_added_latency() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (TestServer metered =
        new TestServer(inbox, dataSource, effects, 0, b -> b.meterRegistry(registry))) {
      String uri = metered.uri("/payments");
      send(request(uri, "key-a", "1").header("Idempotency-Key", "m1").build());
      send(request(uri, "key-a", "1").header("Idempotency-Key", "m1").build());
      send(request(uri, "key-a", "2").header("Idempotency-Key", "m1").build());
      send(request(uri, "key-a", "1").build());
      send(
          request(metered.uri("/payments?fail=500"), "key-a", "1")
              .header("Idempotency-Key", "m2")
              .build());
    }
    assertThat(count(registry, "fresh")).isEqualTo(1);
    assertThat(count(registry, "replayed")).isEqualTo(1);
    assertThat(count(registry, "mismatch")).isEqualTo(1);
    assertThat(count(registry, "missing_key")).isEqualTo(1);
    assertThat(count(registry, "released")).isEqualTo(1);
    assertThat(count(registry, "conflict")).isZero();
    assertThat(registry.get("inbox.http.added.latency").tag("outcome", "fresh").timer().count())
        .isEqualTo(1);
  }

  @Test
  void a_server_killed_with_sigkill_mid_request_runs_the_retry_exactly_once() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    TestDatabase db = TestDatabase.shared();
    List<String> args =
        List.of(db.jdbcUrl(), db.user() == null ? "" : db.user(), schema, Integer.toString(port));
    String base = "http://127.0.0.1:" + port;
    try (ChildJvm child = ChildJvm.start(HttpServerProcess.class, args)) {
      awaitUp(child, base);
      CompletableFuture<HttpResponse<String>> inFlight =
          client.sendAsync(
              request(base + "/payments?sleepMs=30000", "key-a", "9")
                  .header("Idempotency-Key", "crash-1")
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      await(
          "the child's handler holds its uncommitted write",
          () -> !backendsWritingEffects().isEmpty());
      child.kill9();
      assertThat(inFlight).failsWithin(Duration.ofSeconds(10));
    }
    assertThat(effects.count()).as("nothing committed by the killed server").isZero();
    try (ChildJvm restarted = ChildJvm.start(HttpServerProcess.class, args)) {
      awaitUp(restarted, base);
      HttpRequest retry =
          request(base + "/payments", "key-a", "9").header("Idempotency-Key", "crash-1").build();
      HttpResponse<String> first = send(retry);
      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(replayed(first)).isFalse();
      HttpResponse<String> second = send(retry);
      assertThat(replayed(second)).isTrue();
      assertThat(second.body()).isEqualTo(first.body());
      assertThat(effects.count())
          .as("exactly one effect row after crash and two retries")
          .isEqualTo(1);
    }
  }

  private void awaitUp(ChildJvm child, String base) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      try {
        send(HttpRequest.newBuilder(URI.create(base + "/payments")).GET().build());
        return;
      } catch (java.io.IOException e) {
        if (!child.isAlive()) {
          break;
        }
        Thread.sleep(100);
      }
    }
    throw new AssertionError("the server did not start:\n" + child.output());
  }

  private static double count(SimpleMeterRegistry registry, String outcome) {
    return registry.get("inbox.http.requests").tag("outcome", outcome).counter().count();
  }

  private HttpRequest.Builder request(String pathOrUri, String apiKey, String body) {
    String uri = pathOrUri.startsWith("http") ? pathOrUri : server.uri(pathOrUri);
    return HttpRequest.newBuilder(URI.create(uri))
        .timeout(Duration.ofSeconds(30))
        .header("X-Api-Key", apiKey)
        .header("Content-Type", "text/plain")
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  private HttpResponse<String> post(String path, String apiKey, String key, String body)
      throws Exception {
    return send(request(path, apiKey, body).header("Idempotency-Key", key).build());
  }

  private HttpResponse<String> send(HttpRequest request) throws Exception {
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static boolean replayed(HttpResponse<?> response) {
    return response.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
  }

  private static void assertProblem(
      HttpResponse<String> response, int status, String rule, String detail) {
    assertProblem(RawHttp.Response.of(response), status, rule, detail);
  }
}
