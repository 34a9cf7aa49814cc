package dev.inbox.spring.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.inbox.ClaimOutcome;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.ProblemDetail;

/**
 * @Idempotent endpoints over real HTTP, with their JdbcTemplate and JPA writes on PostgreSQL.
 */
class IdempotentEndpointTest extends WebTestBase {
  @Autowired MeterRegistry meters;

  @Test
  void jdbc_and_jpa_writes_commit_with_the_key_and_a_retry_gets_the_first_answer_replayed()
      throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "pay-" + key;
    HttpResponse<String> first = client.post("/pay", key, body);
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(replayed(first)).isFalse();
    assertEffects(body, 1);

    HttpResponse<String> retry = client.post("/pay", key, body);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(replayed(retry)).isTrue();
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Location"))
        .isPresent()
        .isEqualTo(first.headers().firstValue("Location"));
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"));
    assertEffects(body, 1);
    assertThat(inbox.admin().lookup("anonymous", key, null))
        .get()
        .extracting(claim -> claim.outcome())
        .isEqualTo(ClaimOutcome.DUPLICATE);
  }

  @Test
  void the_same_key_with_another_request_gets_422_as_problem_details_and_no_effect()
      throws Exception {
    String key = UUID.randomUUID().toString();
    assertThat(client.post("/pay", key, "first-" + key).statusCode()).isEqualTo(201);

    HttpResponse<String> other = client.post("/pay", key, "second-" + key);
    assertProblem(other, 422, "idempotency-key-mismatch");
    assertEffects("second-" + key, 0);
  }

  @Test
  void a_missing_or_malformed_key_gets_400_as_problem_details_and_the_method_never_runs()
      throws Exception {
    String body = "no-key-" + UUID.randomUUID();
    assertProblem(client.post("/pay", null, body), 400, "idempotency-key-missing");
    assertProblem(client.post("/pay", "\"unterminated", body), 400, "idempotency-key-invalid");
    assertProblem(client.post("/pay", "", body), 400, "idempotency-key-invalid");
    assertEffects(body, 0);
  }

  @Test
  void a_retry_while_the_first_request_runs_gets_409_with_retry_after_then_the_replay()
      throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "held-" + key;
    WebTestApplication.entered = new CountDownLatch(1);
    WebTestApplication.release = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<HttpResponse<String>> first = pool.submit(() -> client.post("/held", key, body));
      assertThat(WebTestApplication.entered.await(30, TimeUnit.SECONDS)).isTrue();

      HttpResponse<byte[]> during = client.postForBytes("/held", key, body);
      ProblemDetail problem = assertProblemDetail(during, 409, "request-in-progress");
      assertThat(problem.getTitle()).isEqualTo("Conflict");
      assertThat(problem.getInstance()).isEqualTo(URI.create("/held"));
      assertThat(during.headers().allValues("Retry-After")).containsExactly("1");

      WebTestApplication.release.countDown();
      assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
      HttpResponse<String> after = client.post("/held", key, body);
      assertThat(after.statusCode()).isEqualTo(201);
      assertThat(replayed(after)).isTrue();
      assertEffects(body, 1);
    } finally {
      WebTestApplication.release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void thirty_two_concurrent_requests_with_one_key_have_exactly_one_effect() throws Exception {
    int threads = 32;
    String key = UUID.randomUUID().toString();
    String body = "storm-" + key;
    WebTestApplication.entered = new CountDownLatch(1);
    WebTestApplication.release = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CyclicBarrier start = new CyclicBarrier(threads);
    try {
      List<Future<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        answers.add(
            pool.submit(
                () -> {
                  start.await();
                  return client.post("/held", key, body);
                }));
      }
      assertThat(WebTestApplication.entered.await(30, TimeUnit.SECONDS)).isTrue();
      // Hold the first request until another one waits on its key's lock: the storm overlaps.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  jdbc.queryForObject(
                          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                              + " AND datname = current_database()",
                          Integer.class)
                      > 0);
      WebTestApplication.release.countDown();

      int fresh = 0;
      int replays = 0;
      int conflicts = 0;
      for (Future<HttpResponse<String>> answer : answers) {
        HttpResponse<String> response = answer.get(120, TimeUnit.SECONDS);
        if (response.statusCode() == 201 && !replayed(response)) {
          fresh++;
        } else if (response.statusCode() == 201) {
          replays++;
        } else {
          assertProblem(response, 409, "request-in-progress");
          conflicts++;
        }
      }
      assertThat(fresh).isEqualTo(1);
      assertThat(fresh + replays + conflicts).isEqualTo(threads);
      assertEffects(body, 1);
    } finally {
      WebTestApplication.release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void two_users_with_the_same_key_get_two_effects_and_each_their_own_replay() throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "shared-" + key;
    HttpResponse<String> alice = client.post("/pay", key, body, "alice");
    HttpResponse<String> bob = client.post("/pay", key, body, "bob");
    assertThat(alice.statusCode()).isEqualTo(201);
    assertThat(bob.statusCode()).isEqualTo(201);
    assertThat(replayed(alice)).isFalse();
    assertThat(replayed(bob)).isFalse();
    assertThat(json(alice.body()).get("payer").asText()).isEqualTo("alice");
    assertThat(json(bob.body()).get("payer").asText()).isEqualTo("bob");
    assertEffects(body, 2);

    HttpResponse<String> aliceAgain = client.post("/pay", key, body, "alice");
    assertThat(replayed(aliceAgain)).isTrue();
    assertThat(json(aliceAgain.body()).get("payer").asText()).isEqualTo("alice");
    HttpResponse<String> anonymous = client.post("/pay", key, body);
    assertThat(replayed(anonymous)).isFalse();
    assertThat(jdbcEffects(body)).isEqualTo(3);
    assertThat(inbox.admin().find("alice", key)).isPresent();
    assertThat(inbox.admin().find("bob", key)).isPresent();
    assertThat(inbox.admin().find("anonymous", key)).isPresent();
  }

  @Test
  void an_answer_that_is_not_stored_rolls_the_writes_back_and_leaves_the_key_for_a_retry()
      throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "unstored-" + key;
    WebTestApplication.failUnstored.set(true);
    try {
      HttpResponse<String> failed = client.post("/unstored", key, body);
      assertThat(failed.statusCode()).isEqualTo(503);
      assertThat(failed.body()).isEqualTo("try again");
      assertEffects(body, 0);
    } finally {
      WebTestApplication.failUnstored.set(false);
    }
    HttpResponse<String> retry = client.post("/unstored", key, body);
    assertThat(retry.statusCode()).isEqualTo(200);
    assertThat(replayed(retry)).isFalse();
    assertEffects(body, 1);
    assertThat(inbox.admin().find("anonymous", key).orElseThrow().attempts()).isEqualTo(2);
  }

  @Test
  void a_method_that_throws_leaves_no_write_and_no_stored_answer() throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "throws-" + key;
    HttpResponse<String> failed = client.post("/throws", key, body);
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(replayed(failed)).isFalse();
    assertEffects(body, 0);
    assertThat(client.post("/throws", key, body).statusCode()).isEqualTo(500);
    assertThat(jdbcEffects(body)).isZero();
  }

  @Test
  void a_success_in_a_rollback_only_transaction_becomes_a_500_problem_with_nothing_committed()
      throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "rollback-only-" + key;
    assertProblem(client.post("/rollback-only", key, body), 500, "transaction-rolled-back");
    assertEffects(body, 0);
    assertThat(inbox.admin().find("anonymous", key)).isEmpty();
  }

  @Test
  void an_optional_key_protects_when_sent_and_runs_unprotected_when_not() throws Exception {
    String key = UUID.randomUUID().toString();
    String keyed = "optional-keyed-" + key;
    assertThat(client.post("/optional", key, keyed).statusCode()).isEqualTo(200);
    assertThat(replayed(client.post("/optional", key, keyed))).isTrue();
    assertEffects(keyed, 1);

    String unkeyed = "optional-unkeyed-" + key;
    assertThat(client.post("/optional", null, unkeyed).statusCode()).isEqualTo(200);
    assertThat(client.post("/optional", null, unkeyed).statusCode()).isEqualTo(200);
    assertThat(jdbcEffects(unkeyed)).isEqualTo(2);
  }

  @Test
  void a_method_without_transactional_writes_in_the_transaction_begun_for_its_key()
      throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "no-transactional-" + key;
    assertThat(client.post("/no-transactional", key, body).statusCode()).isEqualTo(200);
    assertThat(replayed(client.post("/no-transactional", key, body))).isTrue();
    assertEffects(body, 1);
  }

  @Test
  void the_key_is_claimed_in_the_transaction_the_methods_transactional_describes()
      throws Exception {
    String key = UUID.randomUUID().toString();
    HttpResponse<String> response = client.post("/isolation", key, "isolation-" + key);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("serializable");
    assertThat(jdbcEffects("isolation-" + key)).isEqualTo(1);
  }

  @Test
  void a_key_a_listener_recorded_in_the_users_scope_is_not_run_again_over_http() throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "cross-channel-" + key;
    // What a @KafkaListener on the inbox does with a message keyed in scope "alice".
    assertThat(inbox.execute("alice", key, tx -> null).executed()).isTrue();

    HttpResponse<String> http = client.post("/pay", key, body, "alice");
    assertThat(http.statusCode()).isEqualTo(200);
    assertThat(replayed(http)).isTrue();
    assertThat(http.body()).contains("already-processed");
    assertEffects(body, 0);
    // Bob's key of the same name is his own.
    assertThat(client.post("/pay", key, body, "bob").statusCode()).isEqualTo(201);
    assertEffects(body, 1);
  }

  @Test
  void a_jpa_write_that_fails_at_the_flush_fails_the_method_and_counts_an_attempt()
      throws Exception {
    String id = UUID.randomUUID().toString();
    String first = id + " first";
    assertThat(client.post("/jpa-id", UUID.randomUUID().toString(), first).statusCode())
        .isEqualTo(200);
    assertEffects(first, 1);

    // The same JPA id under a new key: the INSERT fails when Hibernate flushes it. The flush runs
    // before the answer is recorded, so it is the method's failure, rolled back and counted on
    // the key; were it left to the commit, the key would have no record at all.
    String key = UUID.randomUUID().toString();
    String second = id + " second";
    HttpResponse<String> failed = client.post("/jpa-id", key, second);
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(replayed(failed)).isFalse();
    assertThat(jdbcEffects(second)).isZero();
    assertThat(inbox.admin().find("anonymous", key).orElseThrow().attempts()).isEqualTo(1);
  }

  @Test
  void an_endpoint_scoped_like_a_consumer_group_shares_its_keys_with_that_listener()
      throws Exception {
    String key = UUID.randomUUID().toString();
    String body = "group-" + key;
    // A @KafkaListener of group "payments-group" processed the payment with this key first.
    assertThat(inbox.execute("payments-group", key, tx -> null).executed()).isTrue();

    HttpResponse<String> alice = client.post("/group-pay", key, body, "alice");
    assertThat(replayed(alice)).isTrue();
    assertThat(alice.body()).contains("already-processed");
    HttpResponse<String> anonymous = client.post("/group-pay", key, body);
    assertThat(replayed(anonymous)).isTrue();
    assertEffects(body, 0);

    String fresh = UUID.randomUUID().toString();
    assertThat(replayed(client.post("/group-pay", fresh, body, "bob"))).isFalse();
    assertThat(inbox.admin().find("payments-group", fresh)).isPresent();
    assertEffects(body, 1);
  }

  @Test
  void each_answer_is_counted_in_the_applications_meter_registry() throws Exception {
    double replaysBefore = requests("replayed");
    double mismatchesBefore = requests("mismatch");
    String key = UUID.randomUUID().toString();
    client.post("/pay", key, "metered-" + key);
    client.post("/pay", key, "metered-" + key);
    client.post("/pay", key, "other-" + key);
    assertThat(requests("replayed") - replaysBefore).isEqualTo(1);
    assertThat(requests("mismatch") - mismatchesBefore).isEqualTo(1);
  }

  private double requests(String outcome) {
    return meters.get("inbox.http.requests").tag("outcome", outcome).counter().count();
  }

  @Test
  void an_endpoint_without_the_annotation_is_never_claimed() throws Exception {
    String key = UUID.randomUUID().toString();
    assertThat(client.post("/plain", key, "plain").statusCode()).isEqualTo(200);
    assertThat(replayed(client.post("/plain", key, "plain"))).isFalse();
    assertThat(inbox.admin().find("anonymous", key)).isEmpty();
  }

  static void assertProblem(HttpResponse<String> response, int status, String rule)
      throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type"))
        .get()
        .asString()
        .startsWith("application/problem+json");
    JsonNode problem = json(response.body());
    assertThat(problem.get("status").asInt()).isEqualTo(status);
    assertThat(problem.get("rule").asText()).isEqualTo(rule);
    assertThat(problem.get("title").asText()).isNotBlank();
    assertThat(problem.get("detail").asText()).isNotBlank();
  }
}
