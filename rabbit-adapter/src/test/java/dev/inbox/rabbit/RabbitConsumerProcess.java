package dev.inbox.rabbit;

import com.rabbitmq.client.ConnectionFactory;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import dev.inbox.testing.EffectsTable;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A consumer in its own JVM, so that a test can kill it with {@code kill -9}. Arguments: AMQP URI,
 * queue, dead-letter exchange, JDBC URL, database user, schema.
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
    InboxRabbitConsumer.builder()
        .connection(factory.newConnection("inbox-child-consumer"))
        .queue(args[1])
        .deadLetterExchange(args[2])
        .inbox(inbox)
        .handler(
            (delivery, tx) ->
                effects.apply(
                    tx,
                    delivery.getProperties().getMessageId(),
                    Long.parseLong(new String(delivery.getBody(), StandardCharsets.UTF_8))))
        .build()
        .start();
    System.out.println("consumer started");
    new CountDownLatch(1).await();
  }
}
