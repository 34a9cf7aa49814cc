package dev.inbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.PublicApi;
import org.junit.jupiter.api.Test;

/** No public or protected signature of the CLI names an internal type of core. */
class PublicApiTest {
  @Test
  void no_public_signature_names_an_internal_type() {
    assertThat(PublicApi.exposures(InboxCli.class)).isEmpty();
  }
}
