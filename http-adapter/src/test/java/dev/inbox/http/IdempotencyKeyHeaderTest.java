package dev.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IdempotencyKeyHeaderTest {

  @Test
  void a_bare_token_and_a_structured_field_string_name_the_same_key() {
    assertThat(IdempotencyKeyHeader.parse("8e03978e-40d5-43e8-bc93-6894a57f9324"))
        .isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
    assertThat(IdempotencyKeyHeader.parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""))
        .isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
    assertThat(IdempotencyKeyHeader.parse("  abc  ")).isEqualTo("abc");
    assertThat(IdempotencyKeyHeader.parse("\"a\\\"b\\\\c\"")).isEqualTo("a\"b\\c");
  }

  @Test
  void each_broken_rule_is_named() {
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("")).hasMessage("must not be empty");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("\"\"")).hasMessage("must not be empty");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("\" \"")).hasMessage("must not be blank");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("x".repeat(256)))
        .hasMessage("must be at most 255 characters, but has 256");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("a\u0001b"))
        .hasMessage("must not contain control characters, but has U+0001 at index 1");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("xch-\u00c3\u00a9-1"))
        .isInstanceOf(IdempotencyKeyHeader.NotAsciiException.class)
        .hasMessageStartingWith("must be printable ASCII")
        .hasMessageContaining("at index 4");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("\"abc"))
        .hasMessageStartingWith("must end with a double quote");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("\"a\"b\""))
        .hasMessageStartingWith("must escape a double quote");
    assertThatThrownBy(() -> IdempotencyKeyHeader.parse("\"a\\nb\""))
        .hasMessageStartingWith("may escape only");
  }
}
