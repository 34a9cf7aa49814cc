package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.http.UriCompliance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Spellings of the protected path, sent raw over a socket (a client library would normalise them),
 * to a filter set up with {@code pathPrefixes("/payments")}. Jetty routes on the decoded,
 * normalised path, so every spelling it accepts reaches the payments servlet; the filter must see
 * the same path, or the request runs unprotected.
 */
class PathVariantsTest extends FilterTestBase {
  /**
   * Spellings that Jetty's default URI compliance routes to the servlet at {@code /payments}, as
   * the same request.
   */
  private static final List<String> ROUTED =
      List.of("/payments", "/%70ayments", "/./payments", "/a/../payments");

  /** Spellings that Jetty's default URI compliance refuses itself, as ambiguous. */
  private static final List<String> REFUSED_BY_JETTY =
      List.of(
          "//payments",
          "/payments%2F",
          "/%2e/payments",
          "/a/%2e%2e/payments",
          "/a/..;/payments",
          "/a/..%2Fpayments");

  /** Spellings that Jetty's default URI compliance refuses itself, as not decodable. */
  private static final List<String> UNDECODABLE =
      List.of("/payments%5C", "/payments/%E9", "/payments/%c0%af", "\\payments");

  @ParameterizedTest
  @EnumSource(IdempotencyFilter.Mode.class)
  void one_key_sent_to_every_spelling_of_the_protected_path_takes_effect_once(
      IdempotencyFilter.Mode mode) throws Exception {
    try (TestServer modal = new TestServer(inbox, dataSource, effects, 0, b -> b.mode(mode))) {
      Map<String, RawHttp.Response> answers = new LinkedHashMap<>();
      for (String path : ROUTED) {
        answers.put(path, RawHttp.post(modal.port(), path, "key-a", "pay-1", "100"));
      }
      for (String path : REFUSED_BY_JETTY) {
        RawHttp.Response refused = RawHttp.post(modal.port(), path, "key-a", "pay-1", "100");
        assertThat(refused.status()).as(path + " is refused by Jetty").isEqualTo(400);
        assertThat(refused.header("Content-Type"))
            .as(path + " is refused by Jetty itself, before the filter")
            .hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
      }
      assertThat(effects.count()).as("effect rows for one key over every spelling").isEqualTo(1);
      assertThat(modal.runs).as("handler runs for one key over every spelling").hasValue(1);
      RawHttp.Response first = answers.get(ROUTED.get(0));
      assertThat(first.status()).as(first.body()).isEqualTo(201);
      answers.forEach(
          (path, answer) -> {
            assertThat(answer.status()).as(path + ": " + answer.body()).isEqualTo(201);
            assertThat(answer.replayed()).as(path + " is replayed").isEqualTo(answer != first);
            assertThat(answer.body()).isEqualTo(first.body());
          });
    }
  }

  @Test
  void a_path_jetty_cannot_decode_is_refused_by_jetty_itself_before_the_filter() throws Exception {
    for (String path : UNDECODABLE) {
      RawHttp.Response refused = RawHttp.post(server.port(), path, "key-a", "und-1", "100");
      assertThat(refused.status()).as(path + ": " + refused.body()).isEqualTo(400);
      assertThat(refused.header("Content-Type"))
          .as(path + " is refused by Jetty itself")
          .hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
    }
    assertThat(server.runs).as("handler runs").hasValue(0);
    assertThat(effects.count()).as("effect rows").isZero();
  }

  @Test
  void a_percent_encoded_path_is_the_same_request_as_the_plain_one_and_is_replayed()
      throws Exception {
    RawHttp.Response plain = RawHttp.post(server.port(), "/payments/charge", "key-a", "ch-1", "7");
    RawHttp.Response encoded =
        RawHttp.post(server.port(), "/payments/%63harge", "key-a", "ch-1", "7");
    assertThat(plain.status()).as(plain.body()).isEqualTo(201);
    assertThat(encoded.status()).as(encoded.body()).isEqualTo(201);
    assertThat(encoded.replayed()).isTrue();

    RawHttp.Response encodedFirst =
        RawHttp.post(server.port(), "/payments/%63harge", "key-a", "ch-2", "7");
    RawHttp.Response plainAfter =
        RawHttp.post(server.port(), "/payments/charge", "key-a", "ch-2", "7");
    assertThat(encodedFirst.status()).as(encodedFirst.body()).isEqualTo(201);
    assertThat(plainAfter.status()).as(plainAfter.body()).isEqualTo(201);
    assertThat(plainAfter.replayed()).isTrue();

    assertThat(server.runs).hasValue(2);
    assertThat(effects.count()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(IdempotencyFilter.Mode.class)
  void requests_that_differ_in_path_parameters_are_a_mismatch(IdempotencyFilter.Mode mode)
      throws Exception {
    // A JAX-RS @MatrixParam reads the amount from the path: another amount is another request.
    try (TestServer modal = new TestServer(inbox, dataSource, effects, 0, b -> b.mode(mode))) {
      int port = modal.port();
      RawHttp.Response first = RawHttp.post(port, "/payments;amount=100", "key-a", "mx-1", "1");
      assertThat(first.status()).as(first.body()).isEqualTo(201);
      for (String other :
          List.of(
              "/payments;amount=999",
              "/payments",
              "/payments;amount=100;amount=1",
              "/payments;currency=EUR/../payments;amount=100")) {
        assertProblem(
            RawHttp.post(port, other, "key-a", "mx-1", "1"),
            422,
            "idempotency-key-mismatch",
            "was already used with a different request");
      }
      for (String same :
          List.of(
              "/%70ayments;amount=100",
              "/payments;amount=100;", "/payments;amount=100;jsessionid=s1")) {
        RawHttp.Response replay = RawHttp.post(port, same, "key-a", "mx-1", "1");
        assertThat(replay.status()).as(same + ": " + replay.body()).isEqualTo(201);
        assertThat(replay.replayed()).as(same + " is the same request").isTrue();
      }
      assertThat(modal.runs).as("handler runs").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }

  @Test
  void path_parameters_on_different_segments_are_different_requests() throws Exception {
    assertThat(RawHttp.post(server.port(), "/payments;v=1/charge", "key-a", "seg-1", "7").status())
        .isEqualTo(201);
    assertProblem(
        RawHttp.post(server.port(), "/payments/charge;v=1", "key-a", "seg-1", "7"),
        422,
        "idempotency-key-mismatch",
        "was already used with a different request");
    RawHttp.Response encoded =
        RawHttp.post(server.port(), "/payments;v=1/%63harge", "key-a", "seg-1", "7");
    assertThat(encoded.status()).as(encoded.body()).isEqualTo(201);
    assertThat(encoded.replayed()).isTrue();
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void the_same_key_on_another_path_is_still_a_mismatch() throws Exception {
    assertThat(RawHttp.post(server.port(), "/payments", "key-a", "m-1", "7").status())
        .isEqualTo(201);
    assertProblem(
        RawHttp.post(server.port(), "/payments/charge", "key-a", "m-1", "7"),
        422,
        "idempotency-key-mismatch",
        "was already used with a different request");
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void a_path_that_jetty_lets_in_but_cannot_decode_unambiguously_is_refused_with_400()
      throws Exception {
    // With every URI violation allowed, Jetty routes some of these to the payments servlet, yet
    // cannot say which path they name (getServletPath() throws): the filter must not let them in.
    try (TestServer lax =
        new TestServer(inbox, dataSource, effects, 0, b -> b, UriCompliance.UNSAFE, false)) {
      for (String path : REFUSED_BY_JETTY) {
        assertProblem(
            RawHttp.post(lax.port(), path, "key-a", "amb-1", "100"),
            400,
            "path-ambiguous",
            "cannot be decoded unambiguously");
      }
      assertThat(lax.runs).as("handler runs").hasValue(0);
      assertThat(effects.count()).as("effect rows").isZero();
    }
  }

  @Test
  void
      a_container_that_decodes_ambiguous_paths_is_followed_and_what_it_leaves_unnormalised_is_refused()
          throws Exception {
    // Told to decode ambiguous paths anyway, Jetty normalises some to /payments, and hands others
    // over with dot or empty segments, which the filter cannot match against its prefixes.
    try (TestServer decoding =
        new TestServer(inbox, dataSource, effects, 0, b -> b, UriCompliance.UNSAFE, true)) {
      int port = decoding.port();
      assertThat(RawHttp.post(port, "/payments", "key-a", "dec-1", "100").status()).isEqualTo(201);
      for (String path : List.of("/%2e/payments", "/a/%2e%2e/payments", "/a/..;/payments")) {
        RawHttp.Response replay = RawHttp.post(port, path, "key-a", "dec-1", "100");
        assertThat(replay.status()).as(path + ": " + replay.body()).isEqualTo(201);
        assertThat(replay.replayed()).as(path + " is replayed").isTrue();
      }
      for (String path : List.of("//payments", "/a/..%2Fpayments")) {
        assertProblem(
            RawHttp.post(port, path, "key-a", "dec-1", "100"),
            400,
            "path-ambiguous",
            "cannot be decoded unambiguously");
      }
      assertThat(decoding.runs).as("handler runs").hasValue(1);
      assertThat(effects.count()).as("effect rows").isEqualTo(1);
    }
  }
}
