package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.internal.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class FingerprintsTest {
  private static final byte[] DIGEST = Fingerprints.sha256("payload");

  private static byte[] body(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void a_message_fingerprint_names_its_kind_and_digests_the_body() {
    byte[] fingerprint = Fingerprints.ofMessage(body("{\"amount\":100}"));
    assertThat(Fingerprints.kind(fingerprint)).isEqualTo(Fingerprints.MESSAGE_KIND);
    assertThat(Arrays.copyOfRange(fingerprint, fingerprint.length - 32, fingerprint.length))
        .isEqualTo(Fingerprints.sha256(body("{\"amount\":100}")));
    assertThat(Fingerprints.ofMessage(null)).isEqualTo(Fingerprints.ofMessage(new byte[0]));
  }

  /** Stored fingerprints must not change: a re-send after an upgrade would be a mismatch. */
  @Test
  void a_message_fingerprint_is_the_tagged_digest_byte_for_byte() {
    for (String text : new String[] {"", "x", "{\"amount\":100}", "ü".repeat(1000)}) {
      assertThat(Fingerprints.ofMessage(body(text)))
          .isEqualTo(Fingerprints.tagged(Fingerprints.MESSAGE_KIND, Fingerprints.sha256(text)));
    }
  }

  @Test
  void untagged_fingerprints_are_one_kind_of_their_own() {
    assertThat(Fingerprints.kind(DIGEST)).isEmpty();
    assertThat(Fingerprints.kind(null)).isEmpty();
    assertThat(Fingerprints.kind(new byte[0])).isEmpty();
    assertThat(Fingerprints.comparable(DIGEST, Fingerprints.sha256("other"))).isTrue();
    assertThat(Fingerprints.mismatch(DIGEST, Fingerprints.sha256("other"))).isTrue();
    assertThat(Fingerprints.mismatch(DIGEST, DIGEST.clone())).isFalse();
  }

  @Test
  void fingerprints_of_different_kinds_or_a_missing_one_never_mismatch() {
    byte[] message = Fingerprints.ofMessage(body("x"));
    byte[] http = Fingerprints.tagged("http", DIGEST);
    assertThat(Fingerprints.comparable(DIGEST, message)).isFalse();
    assertThat(Fingerprints.mismatch(DIGEST, message)).isFalse();
    assertThat(Fingerprints.mismatch(message, http)).isFalse();
    assertThat(Fingerprints.mismatch(null, message)).isFalse();
    assertThat(Fingerprints.mismatch(message, null)).isFalse();
    assertThat(Fingerprints.comparable(null, null)).isFalse();
  }

  @Test
  void two_fingerprints_of_one_kind_mismatch_when_their_digests_differ() {
    assertThat(Fingerprints.mismatch(Fingerprints.ofMessage(body("100")), body("x"))).isFalse();
    assertThat(
            Fingerprints.mismatch(
                Fingerprints.ofMessage(body("100")), Fingerprints.ofMessage(body("999999"))))
        .isTrue();
    assertThat(
            Fingerprints.mismatch(
                Fingerprints.ofMessage(body("100")), Fingerprints.ofMessage(body("100"))))
        .isFalse();
  }

  @Test
  void malformed_tags_are_untagged() {
    byte[] noKindBytes = {'I', 'N', 'B', 'X', 3, 'a'};
    byte[] zeroLength = {'I', 'N', 'B', 'X', 0, 'a'};
    byte[] highByteLength = {'I', 'N', 'B', 'X', (byte) 0x85, 'a', 'b', 'c', 'd', 'e'};
    byte[] magicOnly = {'I', 'N', 'B', 'X'};
    assertThat(Fingerprints.kind(noKindBytes)).isEmpty();
    assertThat(Fingerprints.kind(zeroLength)).isEmpty();
    assertThat(Fingerprints.kind(highByteLength)).isEmpty();
    assertThat(Fingerprints.kind(magicOnly)).isEmpty();
    assertThat(Fingerprints.kind(new byte[] {'I', 'N', 'B', 'X', 1, 'a'})).isEqualTo("a");
  }

  @Test
  void kinds_are_compared_byte_for_byte() {
    byte[] first = {'I', 'N', 'B', 'X', 1, (byte) 0x80, 1, 2};
    byte[] second = {'I', 'N', 'B', 'X', 1, (byte) 0x81, 1, 3};
    assertThat(Fingerprints.comparable(first, second)).isFalse();
    assertThat(Fingerprints.mismatch(first, second)).isFalse();
  }

  @Test
  void a_kind_must_be_printable_ascii_of_at_most_32_characters() {
    assertThat(Fingerprints.kind(Fingerprints.tagged("k".repeat(32), DIGEST)))
        .isEqualTo("k".repeat(32));
    for (String bad : new String[] {null, "", "k".repeat(33), "with space", "é"}) {
      assertThatThrownBy(() -> Fingerprints.tagged(bad, DIGEST))
          .as("kind %s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("fingerprint kind");
    }
  }
}
