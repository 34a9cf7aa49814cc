package dev.inbox.examples;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Publishes payments with publisher confirms; the payment id is the AMQP messageId. */
@Command(
    name = "rabbit-producer",
    mixinStandardHelpOptions = true,
    description = {
      "Publish payments to a RabbitMQ queue with confirms, re-publishing some with the same messageId.",
      "The last line on stdout is {\"sent\":N,\"distinct\":K,\"sumCents\":S}."
    })
final class RabbitProducerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--amqp-uri",
      defaultValue = "amqp://guest:guest@127.0.0.1:5672",
      description =
          "RabbitMQ (default: the local broker as guest, amqp://guest:***@127.0.0.1:5672).")
  String amqpUri;

  @Option(
      names = "--queue",
      defaultValue = "payments",
      description = "Queue (default: ${DEFAULT-VALUE}).")
  String queue;

  @Option(
      names = "--count",
      defaultValue = "1000",
      description = "Payments to send, re-sends included (default: ${DEFAULT-VALUE}).")
  int count;

  @Option(
      names = "--duplicate-rate",
      defaultValue = "0.2",
      description = "Fraction re-sent with an earlier messageId (default: ${DEFAULT-VALUE}).")
  double duplicateRate;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description =
          "Random seed; the same seed sends the same payments (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--id-prefix",
      defaultValue = "rabbit",
      description = "Prefix of payment ids (default: ${DEFAULT-VALUE}).")
  String idPrefix;

  @Override
  public Integer call() throws Exception {
    Validate.amqpUri(spec, "--amqp-uri", amqpUri);
    Validate.name(spec, "--queue", queue);
    Validate.positive(spec, "--count", count);
    Validate.rate(spec, "--duplicate-rate", duplicateRate);
    Validate.name(spec, "--id-prefix", idPrefix);
    PaymentPlan plan = PaymentPlan.generate(idPrefix, count, duplicateRate, seed);
    send(amqpUri, queue, plan.sends());
    System.out.println(plan.summaryJson());
    return 0;
  }

  /** Publishes every payment and waits until the broker confirmed all of them. */
  static void send(String amqpUri, String queue, List<Payment> payments) throws Exception {
    try (Connection connection = Amqp.connect(amqpUri, "inbox-examples-producer");
        Channel channel = connection.createChannel()) {
      PaymentQueues.declare(channel, queue);
      channel.confirmSelect();
      int unconfirmed = 0;
      for (Payment payment : payments) {
        AMQP.BasicProperties properties =
            new AMQP.BasicProperties.Builder()
                .messageId(payment.paymentId())
                .contentType("application/json")
                .deliveryMode(2)
                .headers(Map.of("idempotency-key", payment.paymentId()))
                .build();
        channel.basicPublish("", queue, true, properties, payment.toJson());
        if (++unconfirmed == 500) {
          channel.waitForConfirmsOrDie(30_000);
          unconfirmed = 0;
        }
      }
      channel.waitForConfirmsOrDie(30_000);
    }
  }
}
