package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.micrometer.MicrometerInboxListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetricsTest extends InboxTestSupport {

  @Test
  void claims_handlers_batches_takeovers_and_purges_are_published_to_micrometer() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Inbox inbox =
        inbox(
            s ->
                s.listener(new MicrometerInboxListener(registry)).retention(Duration.ofMinutes(1)));
    inbox.executeBatch(
        "c",
        List.of(BatchItem.of("a", 1), BatchItem.of("b", 2), BatchItem.of("a", 1)),
        BatchFailurePolicy.CONTINUE,
        (i, tx) -> null);
    inbox.execute("c", "a", tx -> null);
    Claim lease = inbox.leases().claim("c", "l", null);
    timePasses(Duration.ofMinutes(5));
    inbox.leases().claim("c", "l", null);

    assertThat(
            registry.get("inbox.claims").tag("scope", "c").tag("outcome", "NEW").counter().count())
        .isEqualTo(4);
    assertThat(registry.get("inbox.claims").tag("outcome", "DUPLICATE").counter().count())
        .isEqualTo(2);
    assertThat(registry.get("inbox.leases.taken_over").counter().count()).isEqualTo(1);
    assertThat(registry.get("inbox.batch.size").summary().totalAmount()).isEqualTo(3);
    assertThat(registry.get("inbox.handler.latency").tag("result", "success").timer().count())
        .isEqualTo(2);
    assertThat(registry.get("inbox.claim.latency").timer().count()).isEqualTo(4);

    assertThat(inbox.admin().purgeExpired()).isEqualTo(2);
    assertThat(registry.get("inbox.purged").counter().count()).isEqualTo(2);
    assertThat(lease.isNew()).isTrue();
  }
}
