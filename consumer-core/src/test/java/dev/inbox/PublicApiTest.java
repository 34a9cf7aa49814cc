package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.PublicApi;
import org.junit.jupiter.api.Test;

/**
 * Public means public: no public or protected signature of consumer-core outside {@code
 * dev.inbox.internal} names a type of {@code dev.inbox.internal}, so that a caller never has to.
 */
class PublicApiTest {
  @Test
  void no_public_signature_names_an_internal_type() {
    assertThat(PublicApi.exposures(Inbox.class)).isEmpty();
  }
}
