package dev.inbox.examples.spring;

import dev.inbox.InboxKeys;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code payments.*} properties.
 *
 * @param name the Kafka topic, the consumer group, the RabbitMQ queue and the endpoint's key scope.
 *     One name for all four because the inbox scopes a record's key by its consumer group and a
 *     message's by its queue: with the endpoint's scope the same, a payment id is one key on all
 *     three doors. Defaults to {@code payments}.
 * @param hold how long each new payment's transaction stays open after its writes, to watch a
 *     concurrent retry wait (or a crash roll it back). Defaults to none.
 */
@ConfigurationProperties("payments")
public record PaymentsProperties(@DefaultValue("payments") String name, Duration hold) {
  public PaymentsProperties {
    String rule = InboxKeys.brokenRule(name);
    if (rule != null) {
      throw new IllegalArgumentException("payments.name " + InboxKeys.describe(name) + " " + rule);
    }
    hold = hold == null ? Duration.ZERO : hold;
    if (hold.isNegative()) {
      throw new IllegalArgumentException("payments.hold must not be negative, but was " + hold);
    }
  }

  /** The RabbitMQ queue that messages failing for good are republished to. */
  public String deadLetterQueue() {
    return name + ".dlq";
  }
}
