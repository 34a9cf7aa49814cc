package dev.inbox.rabbit;

import com.rabbitmq.client.ConnectionFactory;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import dev.inbox.testing.EffectsTable;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A consumer in its own JVM, so that a test can kill it with {@code kill -9}. Arguments: AMQP URI,
 * queue, dead-letter exchange, JDBC URL, database user, schema, and the handler: {@code per-item}
 * (a {@link DeliveryHandler}) or {@code at-once} (a {@link NewDeliveriesHandler} writing each
 * batch's new deliveries with one statement).
 */
public final class RabbitConsumerProcess {
  public static void main(String[] args) throws Exception {
    String user = args[4].isEmpty() ? null : args[4];
    HikariDataSource dataSource = InboxDataSources.pool(args[3], user, null, 4);
    EffectsTable effects = new EffectsTable(dataSource, args[5]);
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(
                InboxSettings.builder().schema(args[5]).janitorInterval(Duration.ZERO).build())
            .build();
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(args[0]);
    InboxRabbitConsumer.Builder builder =
        InboxRabbitConsumer.builder()
            .connection(factory.newConnection("inbox-child-consumer"))
            .queue(args[1])
            .deadLetterExchange(args[2])
            .inbox(inbox);
    if (args[6].equals("at-once")) {
      builder.newDeliveriesHandler(
          (deliveries, tx) ->
              effects.applyAll(
                  tx,
                  deliveries.stream().map(d -> d.getProperties().getMessageId()).toList(),
                  deliveries.stream().map(RabbitTestSupport::amount).toList()));
    } else {
      builder.handler(
          (delivery, tx) ->
              effects.apply(
                  tx, delivery.getProperties().getMessageId(), RabbitTestSupport.amount(delivery)));
    }
    builder.build().start();
    System.out.println("consumer started");
    new CountDownLatch(1).await();
  }
}
