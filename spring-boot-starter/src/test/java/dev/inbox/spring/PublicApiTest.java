package dev.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.PublicApi;
import org.junit.jupiter.api.Test;

/** No public or protected signature of the starter names an internal type of core or its own. */
class PublicApiTest {
  @Test
  void no_public_signature_names_an_internal_type() {
    assertThat(PublicApi.exposures(SpringCallerTransactions.class)).isEmpty();
  }
}
