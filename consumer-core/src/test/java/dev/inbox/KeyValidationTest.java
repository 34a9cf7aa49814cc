package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class KeyValidationTest extends InboxTestSupport {

  static Stream<Arguments> invalidValues() {
    return Stream.of(
        Arguments.of(null, "must not be null"),
        Arguments.of("", "must not be empty"),
        Arguments.of("   ", "must not be blank"),
        Arguments.of("x".repeat(256), "must be at most 255 characters, but has 256"),
        Arguments.of("x".repeat(10_000), "must be at most 255 characters, but has 10000"),
        Arguments.of("ab\ncd", "must not contain control characters, but has U+000A at index 2"),
        Arguments.of("nul\u0000", "must not contain control characters, but has U+0000"),
        Arguments.of("del\u007f", "must not contain control characters"),
        Arguments.of("lone\ud800", "must be valid Unicode"));
  }

  @ParameterizedTest
  @MethodSource("invalidValues")
  void an_invalid_key_is_rejected_with_the_rule_and_nothing_is_written(String key, String rule)
      throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(() -> inbox.execute("scope", key, tx -> null))
        .isInstanceOfSatisfying(
            InvalidKeyException.class,
            e -> {
              assertThat(e.field()).isEqualTo("key");
              assertThat(e.rule()).contains(rule);
            })
        .hasMessageContaining(rule);
    assertThatThrownBy(() -> inbox.leases().claim("scope", key, null))
        .isInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(
            () ->
                inbox.executeBatch(
                    "scope",
                    java.util.List.of(BatchItem.of(key, 1)),
                    BatchFailurePolicy.CONTINUE,
                    (i, tx) -> null))
        .isInstanceOf(InvalidKeyException.class);
    assertThat(inboxRows()).isZero();
  }

  @ParameterizedTest
  @MethodSource("invalidValues")
  void an_invalid_scope_is_rejected_with_the_rule_and_nothing_is_written(String scope, String rule)
      throws Exception {
    Inbox inbox = inbox();
    assertThatThrownBy(() -> inbox.execute(scope, "key", tx -> null))
        .isInstanceOfSatisfying(
            InvalidKeyException.class,
            e -> {
              assertThat(e.field()).isEqualTo("scope");
              assertThat(e.rule()).contains(rule);
            });
    assertThat(inboxRows()).isZero();
  }

  @org.junit.jupiter.api.Test
  void sql_metacharacters_and_unicode_are_just_characters_of_a_key() throws Exception {
    Inbox inbox = inbox();
    String hostile = "'; DROP TABLE " + schema + ".inbox; --";
    String emoji = "pay-\ud83d\udcb8-\u00e9";
    assertThat(inbox.execute("s", hostile, tx -> null).executed()).isTrue();
    assertThat(inbox.execute("s", emoji, tx -> null).executed()).isTrue();
    assertThat(inbox.execute("s", hostile, tx -> null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
    assertThat(inbox.admin().find("s", emoji)).isPresent();
    assertThat(inboxRows()).isEqualTo(2);
    assertThat(InboxKeys.brokenRule("x".repeat(255))).isNull();
  }

  @org.junit.jupiter.api.Test
  void an_idempotency_key_header_names_the_same_key_quoted_or_bare() {
    assertThat(InboxKeys.fromIdempotencyKeyHeader("q-1")).isEqualTo("q-1");
    assertThat(InboxKeys.fromIdempotencyKeyHeader("\"q-1\"")).isEqualTo("q-1");
    assertThat(InboxKeys.fromIdempotencyKeyHeader(" \t\"q-1\" ")).isEqualTo("q-1");
    assertThat(InboxKeys.fromIdempotencyKeyHeader("  q-1\t")).isEqualTo("q-1");
    assertThat(InboxKeys.fromIdempotencyKeyHeader("\"a\\\"b\\\\c\"")).isEqualTo("a\"b\\c");
    assertThat(InboxKeys.fromIdempotencyKeyHeader("a\"b"))
        .as("a bare value as is")
        .isEqualTo("a\"b");
    assertThat(InboxKeys.fromIdempotencyKeyHeader("\"xch-\u00e9-1\""))
        .isEqualTo(InboxKeys.fromIdempotencyKeyHeader("xch-\u00e9-1"))
        .isEqualTo("xch-\u00e9-1");
  }

  @org.junit.jupiter.api.Test
  void an_idempotency_key_header_that_names_no_valid_key_is_rejected_with_the_rule() {
    Map<String, String> rules = new LinkedHashMap<>();
    rules.put("", "must not be empty");
    rules.put("\"\"", "must not be empty");
    rules.put("\" \"", "must not be blank");
    rules.put("\"abc", "must end with a double quote when it starts with one");
    rules.put("\"", "must end with a double quote when it starts with one");
    rules.put("\"a\"b\"", "must escape a double quote inside its double quotes");
    rules.put("\"a\\nb\"", "may escape only");
    rules.put("\"ab\\\"", "must not end with a backslash inside its double quotes");
    rules.put("\u0001q-1", "must not contain control characters, but has U+0001 at index 0");
    rules.put("\"" + "x".repeat(256) + "\"", "must be at most 255 characters");
    rules.forEach(
        (value, rule) ->
            assertThatThrownBy(() -> InboxKeys.fromIdempotencyKeyHeader(value))
                .as(value)
                .isInstanceOfSatisfying(
                    InvalidKeyException.class,
                    e -> {
                      assertThat(e.field()).isEqualTo("key");
                      assertThat(e.rule()).startsWith(rule);
                    }));
    assertThatThrownBy(() -> InboxKeys.fromIdempotencyKeyHeader(null))
        .isInstanceOf(InvalidKeyException.class)
        .hasMessageContaining("must not be null");
  }

  /**
   * A header that arrives as bytes: valid UTF-8 is the key the text would be; bytes that differ
   * only where they are not UTF-8 are refused, never decoded to one U+FFFD key.
   */
  @org.junit.jupiter.api.Test
  void a_key_header_as_bytes_is_strict_utf_8() {
    assertThat(
            InboxKeys.fromIdempotencyKeyHeaderBytes(
                " \"caf\u00e9-1\"".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .isEqualTo("caf\u00e9-1");
    for (byte last : new byte[] {(byte) 0xFF, (byte) 0xFE, (byte) 0xC3}) {
      byte[] bytes = {'p', 'a', 'y', '-', last};
      assertThatThrownBy(() -> InboxKeys.fromIdempotencyKeyHeaderBytes(bytes))
          .isInstanceOfSatisfying(
              InvalidKeyException.class,
              e -> assertThat(e.rule()).isEqualTo("must be valid UTF-8, but its 5 bytes are not"));
    }
    assertThatThrownBy(() -> InboxKeys.fromIdempotencyKeyHeaderBytes(null))
        .isInstanceOf(InvalidKeyException.class)
        .hasMessageContaining("must not be null");
  }
}
