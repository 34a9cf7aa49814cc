package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.InboxRecord;
import dev.inbox.RecordState;
import jakarta.servlet.DispatcherType;
import java.util.EnumSet;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The filter registered for more dispatcher types than REQUEST, as Spring or a custom setup may
 * register it. A request protected once must not be protected again when it is forwarded or
 * included, an error dispatch is never protected, and a forward or include that no outer pass
 * protects is decided on the path it dispatches to.
 */
class DispatchTypesTest extends FilterTestBase {
  private static final UnaryOperator<IdempotencyFilter.Builder> EVERY_PATH = b -> b;
  private static final UnaryOperator<IdempotencyFilter.Builder> PAYMENTS_ONLY =
      b -> b.pathPrefixes("/payments");

  @Test
  void a_forward_inside_a_protected_request_runs_once_and_stores_the_handlers_answer()
      throws Exception {
    try (DispatchServer s = server(DispatcherType.FORWARD, EVERY_PATH)) {
      RawHttp.Response first = RawHttp.post(s.port(), "/legacy", "key-a", "fw-1", "100");
      RawHttp.Response retry = RawHttp.post(s.port(), "/legacy", "key-a", "fw-1", "100");

      assertThat(first.status()).as(first.body()).isEqualTo(201);
      assertThat(first.body()).isEqualTo("run 1");
      assertThat(retry.status()).as(retry.body()).isEqualTo(201);
      assertThat(retry.replayed()).isTrue();
      assertThat(retry.body()).isEqualTo("run 1");
      assertThat(s.runs).as("handler runs").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }

  @Test
  void a_forward_from_an_unprotected_path_is_decided_on_the_path_it_forwards_to() throws Exception {
    try (DispatchServer s = server(DispatcherType.FORWARD, PAYMENTS_ONLY)) {
      assertProblem(
          RawHttp.post(s.port(), "/legacy", "key-a", new byte[0], "100"),
          400,
          "idempotency-key-invalid",
          "must not be empty");
      RawHttp.Response first = RawHttp.post(s.port(), "/legacy", "key-a", "fw-2", "100");
      RawHttp.Response retry = RawHttp.post(s.port(), "/legacy", "key-a", "fw-2", "100");

      assertThat(first.status()).as(first.body()).isEqualTo(201);
      assertThat(retry.replayed()).isTrue();
      assertThat(s.runs).as("handler runs").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }

  @Test
  void an_error_dispatch_after_a_handler_exception_is_never_protected() throws Exception {
    try (DispatchServer s = server(DispatcherType.ERROR, EVERY_PATH)) {
      RawHttp.Response failed =
          RawHttp.post(s.port(), "/payments", "key-a", "er-1", "100", "X-Fail: throw");

      assertThat(failed.status()).as(failed.body()).isEqualTo(500);
      assertThat(failed.body()).isEqualTo("error page");
      assertThat(s.errorPageRuns).as("error page runs").hasValue(1);
      assertThat(inbox.admin().find("tenant-a", "er-1"))
          .as("the failed attempt, with no answer stored")
          .hasValueSatisfying(
              r -> {
                assertThat(r.state()).isEqualTo(RecordState.FAILED);
                assertThat(r.attempts()).isEqualTo(1);
                assertThat(r.result()).isNull();
              });

      RawHttp.Response retry = RawHttp.post(s.port(), "/payments", "key-a", "er-1", "100");
      assertThat(retry.status()).as(retry.body()).isEqualTo(201);
      assertThat(retry.body()).isEqualTo("run 2");
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
      assertThat(inbox.admin().find("tenant-a", "er-1").map(InboxRecord::state))
          .contains(RecordState.COMPLETED);
    }
  }

  @Test
  void an_include_from_an_unprotected_path_is_decided_on_the_included_path() throws Exception {
    try (DispatchServer s = server(DispatcherType.INCLUDE, PAYMENTS_ONLY)) {
      // During an include the container ignores the status, so the rule is read from the body.
      RawHttp.Response keyless = RawHttp.post(s.port(), "/inc", "key-a", new byte[0], "100");
      assertThat(keyless.body()).contains("\"rule\":\"idempotency-key-invalid\"");
      assertThat(s.runs).as("handler runs without a key").hasValue(0);

      RawHttp.Response first = RawHttp.post(s.port(), "/inc", "key-a", "inc-1", "100");
      RawHttp.Response retry = RawHttp.post(s.port(), "/inc", "key-a", "inc-1", "100");
      assertThat(first.body()).isEqualTo("run 1");
      assertThat(retry.body()).isEqualTo("run 1");
      assertThat(s.runs).as("handler runs").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }

  @Test
  void an_include_inside_a_protected_request_runs_once() throws Exception {
    try (DispatchServer s = server(DispatcherType.INCLUDE, EVERY_PATH)) {
      RawHttp.Response first = RawHttp.post(s.port(), "/inc", "key-a", "inc-2", "100");
      RawHttp.Response retry = RawHttp.post(s.port(), "/inc", "key-a", "inc-2", "100");

      assertThat(first.status()).as(first.body()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("run 1");
      assertThat(retry.replayed()).isTrue();
      assertThat(retry.body()).isEqualTo("run 1");
      assertThat(s.runs).as("handler runs").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }

  private DispatchServer server(
      DispatcherType also, UnaryOperator<IdempotencyFilter.Builder> customize) throws Exception {
    return new DispatchServer(
        inbox, dataSource, effects, EnumSet.of(DispatcherType.REQUEST, also), customize);
  }
}
