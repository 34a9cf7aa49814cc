package dev.inbox.spring.actuate;

import static dev.inbox.spring.actuate.EndpointClient.failedKey;
import static dev.inbox.spring.actuate.EndpointClient.leasedKey;
import static dev.inbox.spring.actuate.EndpointClient.newScope;
import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.AuditEntry;
import dev.inbox.Claim;
import dev.inbox.InboxRecord;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import dev.inbox.spring.TestApplication;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@code /actuator/inbox} over real HTTP on a real server and PostgreSQL, without an authenticated
 * principal: every write is audited as {@code management.endpoint.inbox.actor}.
 */
@SpringBootTest(
    classes = {TestApplication.class, OpenSecurity.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "inbox.schema=boot_actuator",
      "inbox.lease-duration=PT10M",
      "management.endpoints.web.exposure.include=health,inbox",
      "management.endpoint.inbox.actor=on-call-fallback"
    })
class InboxEndpointTest extends ServerTest {
  private static final String REASON = "INC-42: the provider says it was never charged";

  EndpointClient client;
  String scope;

  @BeforeEach
  void setUp() {
    client = client();
    scope = newScope();
  }

  @Test
  void stats_counts_the_keys_of_each_scope_and_state() {
    failedKey(inbox, scope, "a");
    failedKey(inbox, scope, "b");
    inbox.execute(scope, "c", tx -> null);

    EndpointClient.Response stats = client.get("/actuator/inbox");

    assertThat(stats.status()).as(stats.toString()).isEqualTo(200);
    assertThat(stats.<List<Integer>>json(countOf("FAILED"))).containsExactly(2);
    assertThat(stats.<List<Integer>>json(countOf("COMPLETED"))).containsExactly(1);
    assertThat(stats.<List<Integer>>json(countOf("IN_PROGRESS"))).isEmpty();
    assertThat(stats.<Integer>json("$.tableBytes")).isPositive();
    assertThat(stats.<String>json("$.databaseNow")).isNotBlank();
  }

  @Test
  void list_filters_by_scope_and_state_and_pages_with_the_cursor() {
    failedKey(inbox, scope, "k1");
    failedKey(inbox, scope, "k2");
    failedKey(inbox, scope, "k3");
    inbox.execute(scope, "k0-completed", tx -> null);

    EndpointClient.Response first =
        client.get("/actuator/inbox/keys?scope=" + scope + "&state=failed&limit=2");
    assertThat(first.status()).as(first.toString()).isEqualTo(200);
    assertThat(first.<List<String>>json("$.records[*].key")).containsExactly("k1", "k2");
    assertThat(first.<List<String>>json("$.records[*].state")).containsOnly("FAILED");
    String next = first.json("$.next");
    assertThat(next).isNotNull();

    EndpointClient.Response second =
        client.get("/actuator/inbox/keys?scope=" + scope + "&state=FAILED&limit=2&after=" + next);
    assertThat(second.<List<String>>json("$.records[*].key")).containsExactly("k3");
    assertThat(second.<Object>json("$.next")).isNull();

    EndpointClient.Response everyState = client.get("/actuator/inbox/keys?scope=" + scope);
    assertThat(everyState.<List<String>>json("$.records[*].key"))
        .containsExactly("k0-completed", "k1", "k2", "k3");
  }

  @Test
  void list_answers_400_naming_a_bad_filter() {
    EndpointClient.Response state = client.get("/actuator/inbox/keys?state=STUCK");
    assertThat(state.status()).isEqualTo(400);
    assertThat(state.<String>json("$.message"))
        .contains("state must be one of", "COMPLETED", "'STUCK'");

    EndpointClient.Response limit = client.get("/actuator/inbox/keys?limit=0");
    assertThat(limit.status()).isEqualTo(400);
    assertThat(limit.<String>json("$.message")).contains("0");

    EndpointClient.Response olderThan = client.get("/actuator/inbox/keys?olderThan=ten");
    assertThat(olderThan.status()).isEqualTo(400);
    assertThat(olderThan.<String>json("$.message")).contains("olderThan", "PT10M", "'ten'");

    EndpointClient.Response cursor = client.get("/actuator/inbox/keys?after=not-a-cursor");
    assertThat(cursor.status()).as(cursor.toString()).isEqualTo(400);

    EndpointClient.Response view = client.get("/actuator/inbox/everything");
    assertThat(view.status()).isEqualTo(404);
    assertThat(view.<String>json("$.message")).contains("/actuator/inbox/keys");
  }

  @Test
  void show_answers_the_record_with_its_stored_result_and_404_for_an_unknown_key() {
    inbox.execute(
        scope, "paid", tx -> StoredResult.of(201, "{\"id\":7}".getBytes(StandardCharsets.UTF_8)));

    EndpointClient.Response shown = client.get("/actuator/inbox/" + scope + "/paid");
    assertThat(shown.status()).as(shown.toString()).isEqualTo(200);
    assertThat(shown.<String>json("$.record.state")).isEqualTo("COMPLETED");
    assertThat(shown.<Integer>json("$.record.result.status")).isEqualTo(201);
    assertThat(shown.<String>json("$.record.result.body")).isEqualTo("{\"id\":7}");
    assertThat(shown.<List<Object>>json("$.history")).isEmpty();

    EndpointClient.Response unknown = client.get("/actuator/inbox/" + scope + "/never-seen");
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.<String>json("$.message")).contains("'never-seen'", scope, "no record");
  }

  @Test
  void release_frees_a_failed_key_for_exactly_one_more_run_and_is_audited() {
    failedKey(inbox, scope, "k");

    EndpointClient.Response released =
        client.post("/actuator/inbox/" + scope + "/k/release", "{\"reason\":\"" + REASON + "\"}");

    assertThat(released.status()).as(released.toString()).isEqualTo(200);
    assertThat(released.<String>json("$.result")).isEqualTo("RELEASED");
    assertThat(released.<String>json("$.before.state")).isEqualTo("FAILED");
    assertThat(released.<String>json("$.actor")).isEqualTo("on-call-fallback");
    assertThat(onlyAudit("k"))
        .extracting(AuditEntry::action, AuditEntry::actor, AuditEntry::reason, AuditEntry::forced)
        .containsExactly("RELEASE", "on-call-fallback", REASON, false);

    AtomicInteger effects = new AtomicInteger();
    inbox.execute(scope, "k", tx -> count(effects));
    inbox.execute(scope, "k", tx -> count(effects));
    assertThat(effects).hasValue(1);
  }

  @Test
  void release_of_a_live_lease_is_refused_with_409_naming_the_risk_and_taken_with_force() {
    leasedKey(inbox, scope, "k");
    long tokenBefore = inbox.admin().find(scope, "k").orElseThrow().fencingToken();

    EndpointClient.Response refused =
        client.post("/actuator/inbox/" + scope + "/k/release", "{\"reason\":\"" + REASON + "\"}");

    assertThat(refused.status()).as(refused.toString()).isEqualTo(409);
    assertThat(refused.<String>json("$.message"))
        .contains("live lease", "double effect", "\"force\": true");
    InboxRecord untouched = inbox.admin().find(scope, "k").orElseThrow();
    assertThat(untouched.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(untouched.fencingToken()).isEqualTo(tokenBefore);
    assertThat(inbox.admin().show(scope, "k").history()).isEmpty();

    EndpointClient.Response forced =
        client.post(
            "/actuator/inbox/" + scope + "/k/release",
            "{\"reason\":\"" + REASON + "\",\"force\":true}");

    assertThat(forced.status()).as(forced.toString()).isEqualTo(200);
    assertThat(forced.<String>json("$.warning")).contains("forced", "live lease");
    assertThat(onlyAudit("k"))
        .extracting(AuditEntry::action, AuditEntry::actor, AuditEntry::forced)
        .containsExactly("RELEASE", "on-call-fallback", true);
    assertThat(inbox.admin().find(scope, "k").orElseThrow().fencingToken())
        .isGreaterThan(tokenBefore);
  }

  @Test
  void settle_completes_a_failed_key_with_the_operators_result_and_is_audited() {
    failedKey(inbox, scope, "k");

    EndpointClient.Response settled =
        client.post(
            "/actuator/inbox/" + scope + "/k/settle",
            "{\"reason\":\""
                + REASON
                + "\",\"status\":200,\"body\":\"{\\\"paid\\\":true}\","
                + "\"contentType\":\"application/json\"}");

    assertThat(settled.status()).as(settled.toString()).isEqualTo(200);
    assertThat(settled.<String>json("$.result")).isEqualTo("SETTLED");
    assertThat(settled.<String>json("$.after.state")).isEqualTo("COMPLETED");
    assertThat(onlyAudit("k"))
        .extracting(AuditEntry::action, AuditEntry::actor, AuditEntry::reason)
        .containsExactly("SETTLE", "on-call-fallback", REASON);

    Claim again = inbox.leases().claim(scope, "k", null);
    assertThat(again.isNew()).isFalse();
    StoredResult result = again.result().orElseThrow();
    assertThat(result.status()).isEqualTo(200);
    assertThat(result.headers()).isEqualTo(Map.of("Content-Type", List.of("application/json")));
    assertThat(new String(result.body().orElseThrow(), StandardCharsets.UTF_8))
        .isEqualTo("{\"paid\":true}");
  }

  @Test
  void settle_of_a_key_without_a_record_needs_create() {
    String body = "{\"reason\":\"" + REASON + "\",\"status\":204";

    EndpointClient.Response refused =
        client.post("/actuator/inbox/" + scope + "/ghost/settle", body + "}");
    assertThat(refused.status()).as(refused.toString()).isEqualTo(404);
    assertThat(refused.<String>json("$.message")).contains("\"create\": true", "duplicate");
    assertThat(inbox.admin().find(scope, "ghost")).isEmpty();

    EndpointClient.Response created =
        client.post("/actuator/inbox/" + scope + "/ghost/settle", body + ",\"create\":true}");
    assertThat(created.status()).as(created.toString()).isEqualTo(200);
    assertThat(inbox.admin().find(scope, "ghost").orElseThrow().state())
        .isEqualTo(RecordState.COMPLETED);
    assertThat(onlyAudit("ghost")).extracting(AuditEntry::action).isEqualTo("SETTLE");
  }

  @Test
  void operator_mistakes_are_answered_400_404_or_409_and_change_nothing() {
    failedKey(inbox, scope, "k");
    inbox.execute(scope, "done", tx -> null);
    String release = "/actuator/inbox/" + scope + "/k/release";

    assertThat(client.post(release, "{}").status()).isEqualTo(400);
    EndpointClient.Response blank = client.post(release, "{\"reason\":\"  \"}");
    assertThat(blank.status()).isEqualTo(400);
    assertThat(blank.<String>json("$.message")).contains("reason must say why");
    EndpointClient.Response settleOnly = client.post(release, "{\"reason\":\"x\",\"status\":200}");
    assertThat(settleOnly.status()).isEqualTo(400);
    assertThat(settleOnly.<String>json("$.message")).contains("status", "settle");

    String settle = "/actuator/inbox/" + scope + "/k/settle";
    EndpointClient.Response noStatus = client.post(settle, "{\"reason\":\"x\"}");
    assertThat(noStatus.status()).isEqualTo(400);
    assertThat(noStatus.<String>json("$.message")).contains("status is required");
    EndpointClient.Response badStatus = client.post(settle, "{\"reason\":\"x\",\"status\":42}");
    assertThat(badStatus.status()).isEqualTo(400);
    assertThat(badStatus.<String>json("$.message")).contains("42");

    EndpointClient.Response verb = client.post("/actuator/inbox/" + scope + "/k/delete", "{}");
    assertThat(verb.status()).isEqualTo(400); // reason is missing, checked before the verb
    EndpointClient.Response unknownVerb =
        client.post("/actuator/inbox/" + scope + "/k/delete", "{\"reason\":\"x\"}");
    assertThat(unknownVerb.status()).isEqualTo(404);
    assertThat(unknownVerb.<String>json("$.message")).contains("release", "settle");

    EndpointClient.Response noRecord =
        client.post("/actuator/inbox/" + scope + "/nothing/release", "{\"reason\":\"x\"}");
    assertThat(noRecord.status()).isEqualTo(404);
    assertThat(noRecord.<String>json("$.message")).contains("no record");

    EndpointClient.Response completed =
        client.post("/actuator/inbox/" + scope + "/done/release", "{\"reason\":\"x\"}");
    assertThat(completed.status()).isEqualTo(409);
    assertThat(completed.<String>json("$.message")).contains("COMPLETED");

    assertThat(inbox.admin().find(scope, "k").orElseThrow().state()).isEqualTo(RecordState.FAILED);
    assertThat(inbox.admin().show(scope, "k").history()).isEmpty();
    assertThat(inbox.admin().show(scope, "done").history()).isEmpty();
  }

  private AuditEntry onlyAudit(String key) {
    List<AuditEntry> history = inbox.admin().show(scope, key).history();
    assertThat(history).hasSize(1);
    return history.get(0);
  }

  private String countOf(String state) {
    return "$.counts[?(@.scope == '" + scope + "' && @.state == '" + state + "')].count";
  }

  private static StoredResult count(AtomicInteger effects) {
    effects.incrementAndGet();
    return null;
  }
}
