package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Idempotency-Keys whose bytes are not printable ASCII, sent as raw bytes over a socket (an HTTP
 * client library would encode or refuse them itself). Jetty hands header values over decoded as
 * ISO-8859-1, so the UTF-8 key {@code xch-é-1} arrives as {@code xch-Ã©-1}: a different key from
 * the one a Kafka or RabbitMQ consumer records for the same payment.
 */
class NonAsciiKeyTest extends FilterTestBase {
  private static final String RULE = "idempotency-key-not-ascii";

  @Test
  void a_utf8_key_already_recorded_by_a_consumer_is_refused_over_http_and_never_credited_twice()
      throws Exception {
    // The payment arrived over RabbitMQ first, in the same scope, with the key decoded as UTF-8.
    inbox.execute(
        "tenant-a",
        "xch-é-1",
        tx -> {
          effects.apply(tx, "xch-é-1", 100);
          return null;
        });

    RawHttp.Response http =
        RawHttp.post(
            server.port(), "/payments", "key-a", "xch-é-1".getBytes(StandardCharsets.UTF_8), "100");

    assertProblem(http, 400, RULE, "Idempotency-Key must be printable ASCII");
    assertThat(server.runs).as("handler runs").hasValue(0);
    assertThat(effects.count()).as("effect rows across both channels").isEqualTo(1);
  }

  @Test
  void keys_with_non_ascii_bytes_get_400_naming_the_rule_and_are_never_reinterpreted()
      throws Exception {
    List<byte[]> keys =
        List.of(
            utf8("xch-é-1"),
            utf8("pay-€-1"),
            utf8("pay-\uD83D\uDE00-1"),
            utf8("\"quoted-é-1\""),
            utf8("é".repeat(255)),
            new byte[] {'b', 'a', 'd', (byte) 0xFF, '-', '1'});
    for (byte[] key : keys) {
      RawHttp.Response answer = RawHttp.post(server.port(), "/payments", "key-a", key, "5");
      String sent = new String(key, StandardCharsets.UTF_8);
      assertProblem(answer, 400, RULE, "Idempotency-Key must be printable ASCII");
      assertThat(answer.body())
          .as("the answer to %s names no reinterpreted character", sent)
          .doesNotContain("Ã")
          .doesNotContain("U+00")
          .doesNotContain("characters, but has");
    }
    assertThat(server.runs).as("handler runs").hasValue(0);
    assertThat(effects.count()).as("effect rows").isZero();
    assertThat(inbox.admin().find("tenant-a", "xch-Ã©-1"))
        .as("the key as Latin-1 decoded it")
        .isEmpty();
    assertThat(inbox.admin().find("tenant-a", "xch-é-1"))
        .as("the key as UTF-8 decodes it")
        .isEmpty();
  }

  @Test
  void a_printable_ascii_key_of_255_characters_is_still_accepted() throws Exception {
    String key = "k".repeat(254) + "~";
    RawHttp.Response first = RawHttp.post(server.port(), "/payments", "key-a", key, "5");
    RawHttp.Response retry = RawHttp.post(server.port(), "/payments", "key-a", key, "5");
    assertThat(first.status()).as(first.body()).isEqualTo(201);
    assertThat(retry.replayed()).isTrue();
    assertThat(effects.count()).isEqualTo(1);
  }

  @Test
  void a_tab_in_a_key_is_refused_by_the_filter_and_other_control_bytes_by_jetty_first()
      throws Exception {
    assertProblem(
        RawHttp.post(server.port(), "/payments", "key-a", "tab\tin", "5"),
        400,
        "idempotency-key-invalid",
        "must not contain control characters, but has U+0009");
    for (byte control : new byte[] {0x00, 0x01, 0x0B, 0x1F, 0x7F}) {
      RawHttp.Response refused =
          RawHttp.post(server.port(), "/payments", "key-a", new byte[] {'k', control, 'x'}, "5");
      assertThat(refused.status()).as("control byte %02x", control).isEqualTo(400);
      assertThat(refused.header("Content-Type"))
          .as("Jetty's own answer to control byte %02x", control)
          .hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
    }
    assertThat(server.runs).as("handler runs").hasValue(0);
    assertThat(effects.count()).as("effect rows").isZero();
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
