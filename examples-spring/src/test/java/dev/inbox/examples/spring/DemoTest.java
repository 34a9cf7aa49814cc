package dev.inbox.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inbox.testing.ChildJvm;
import dev.inbox.testing.TestRabbit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The service's one command as a user runs it, in a child JVM: {@code --embedded-kafka --demo}
 * starts its own KRaft broker, sends payments with re-sends through the three doors, reports, and
 * exits 0 only if every payment took effect exactly once.
 */
class DemoTest {

  @Test
  void the_demo_on_its_embedded_broker_reports_every_payment_exactly_once_and_exits_0()
      throws Exception {
    String name = TestRabbit.newQueueName("spring-demo");
    List<String> args = new ArrayList<>();
    TestServices.properties(name)
        .forEach(
            (key, value) -> {
              if (!key.startsWith("spring.kafka.")) {
                args.add("--" + key + "=" + value);
              }
            });
    args.addAll(List.of("--embedded-kafka", "--demo", "--demo.payments=120"));
    try (ChildJvm demo = ChildJvm.start(PaymentsServiceApplication.class, args)) {
      assertThat(demo.process().waitFor(5, TimeUnit.MINUTES)).as("the demo ends").isTrue();
      String output = demo.output();
      assertThat(demo.process().exitValue()).as(output).isZero();
      assertThat(output)
          .contains("an embedded KRaft broker in this JVM")
          .containsPattern("payment rows +120 \\(expected 120")
          .containsPattern("doubled +0\\R")
          .containsPattern("lost +0\\R")
          .contains("exactly once: yes");
    } finally {
      try (Connection rabbit = TestRabbit.shared().connectionFactory().newConnection()) {
        Channel channel = rabbit.createChannel();
        channel.queueDelete(name);
        channel.queueDelete(name + ".dlq");
      }
    }
  }
}
