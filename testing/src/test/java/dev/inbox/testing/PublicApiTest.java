package dev.inbox.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.PublicApi.Exposure;
import dev.inbox.testing.api.Clean;
import org.junit.jupiter.api.Test;

class PublicApiTest {
  private static final String LEAKY = "dev.inbox.testing.api.Leaky";
  private static final String HIDDEN = "dev.inbox.testing.api.internal.Hidden";
  private static final String CONTRACT = "dev.inbox.testing.api.internal.HiddenContract";

  @Test
  void finds_every_kind_of_signature_that_names_an_internal_type_and_nothing_else() {
    assertThat(PublicApi.exposures(Clean.class))
        .extracting(Exposure::toString)
        .containsExactlyInAnyOrder(
            LEAKY + " implements names " + HIDDEN,
            LEAKY + " field field names " + HIDDEN,
            LEAKY + " constructor(Hidden) names " + HIDDEN,
            LEAKY + " method get() names " + HIDDEN,
            LEAKY + " method takes(Map) names " + CONTRACT,
            LEAKY + " method throwsIt() names " + HIDDEN,
            LEAKY + " method bounded(HiddenContract) <T> names " + CONTRACT,
            LEAKY + "$Nested extends names " + HIDDEN,
            LEAKY + "$Nested method self() names " + HIDDEN);
  }

  @Test
  void a_package_is_internal_when_one_of_its_segments_is() {
    assertThat(PublicApi.isInternal("dev.inbox.internal")).isTrue();
    assertThat(PublicApi.isInternal("dev.inbox.kafka.internal.loop")).isTrue();
    assertThat(PublicApi.isInternal("dev.inbox.internals")).isFalse();
    assertThat(PublicApi.isInternal("dev.inbox")).isFalse();
  }
}
