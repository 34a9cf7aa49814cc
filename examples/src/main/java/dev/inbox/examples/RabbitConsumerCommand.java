package dev.inbox.examples;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.inbox.Inbox;
import dev.inbox.rabbit.DeliveryKeyExtractor;
import dev.inbox.rabbit.InboxRabbitConsumer;
import dev.inbox.rabbit.RabbitTopology;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Consumes payments from RabbitMQ, each exactly once, into the payments database. */
@Command(
    name = "rabbit-consumer",
    mixinStandardHelpOptions = true,
    description = "Apply the payments of a RabbitMQ queue exactly once, until stopped (Ctrl-C).")
final class RabbitConsumerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin VerboseOption verbose;

  @Option(
      names = "--amqp-uri",
      defaultValue = "amqp://guest:guest@127.0.0.1:5672/%2F",
      description =
          "RabbitMQ URI (default: the local broker as guest, amqp://guest:***@127.0.0.1:5672/%2F).")
  String amqpUri;

  @Option(
      names = "--queue",
      defaultValue = "payments",
      description =
          "Queue to consume; declared with a dead-letter queue (default: ${DEFAULT-VALUE}).")
  String queue;

  @Option(
      names = "--scope",
      defaultValue = "demo",
      description = "Inbox scope (default: ${DEFAULT-VALUE}).")
  String scope;

  @Option(
      names = "--prefetch",
      defaultValue = "200",
      description = "Prefetch count and largest batch (default: ${DEFAULT-VALUE}).")
  int prefetch;

  @Option(
      names = "--jdbc-url",
      defaultValue = ConsumerDatabase.LOCAL_URL,
      description = "PostgreSQL JDBC URL (default: ${DEFAULT-VALUE}).")
  String jdbcUrl;

  @Mixin HandlerOption handler;

  @Override
  public Integer call() throws Exception {
    Validate.amqpUri(spec, "--amqp-uri", amqpUri);
    Validate.name(spec, "--queue", queue);
    Validate.name(spec, "--scope", scope);
    Validate.positive(spec, "--prefetch", prefetch);
    Validate.jdbcUrl(spec, "--jdbc-url", jdbcUrl);
    boolean atOnce = handler.atOnce(spec);
    try (ConsumerDatabase db = new ConsumerDatabase(jdbcUrl, 4);
        Connection connection = Amqp.connect(amqpUri, "inbox-examples-rabbit-consumer")) {
      // The declaring channel stays open: automatic recovery re-declares the topology on the
      // channel that declared it, and fails noisily if that channel was closed.
      Channel topology = connection.createChannel();
      RabbitTopology.Names names = PaymentQueues.declare(topology, queue);
      InboxRabbitConsumer consumer =
          builder(connection, queue, scope, prefetch, names.deadLetterExchange(), db.inbox, atOnce)
              .build()
              .start();
      CountDownLatch stopped = new CountDownLatch(1);
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    consumer.close();
                    stopped.countDown();
                  },
                  "rabbit-consumer-stop"));
      System.out.println("consuming " + queue + " into " + scope);
      stopped.await();
    }
    return 0;
  }

  /** The consumer this command runs, for tests that run it in their own JVM. */
  static InboxRabbitConsumer.Builder builder(
      Connection connection,
      String queue,
      String scope,
      int prefetch,
      String deadLetterExchange,
      Inbox inbox,
      boolean atOnce) {
    // The handler reads the key with the consumer's own extractor, so that the payment id is the
    // inbox key whether it came as the messageId or in the idempotency-key header.
    DeliveryKeyExtractor keys = DeliveryKeyExtractor.messageIdOrHeader();
    InboxRabbitConsumer.Builder builder =
        InboxRabbitConsumer.builder()
            .connection(connection)
            .queue(queue)
            .inbox(inbox)
            .scope(scope)
            .prefetch(prefetch)
            .deadLetterExchange(deadLetterExchange)
            .keyExtractor(keys);
    if (atOnce) {
      builder.newDeliveriesHandler(
          (deliveries, tx) ->
              PaymentsDatabase.applyAll(
                  tx,
                  deliveries.stream().map(delivery -> payment(delivery, keys)).toList(),
                  "rabbit"));
    } else {
      builder.handler(
          (delivery, tx) -> PaymentsDatabase.apply(tx, payment(delivery, keys), "rabbit"));
    }
    return builder;
  }

  private static Payment payment(Delivery delivery, DeliveryKeyExtractor keys) {
    String key;
    try {
      key = keys.keyOf(delivery);
    } catch (Exception e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return Payment.fromJson(delivery.getBody(), key);
  }
}
