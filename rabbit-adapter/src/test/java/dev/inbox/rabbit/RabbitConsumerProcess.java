package dev.inbox.rabbit;

import com.rabbitmq.client.ConnectionFactory;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.NonRetryableException;
import dev.inbox.testing.EffectsTable;
import dev.inbox.testing.acceptance.HandlerKind;
import dev.inbox.testing.acceptance.Payments;
import java.util.concurrent.CountDownLatch;

/**
 * The {@link RabbitFixture}'s consumer in its own JVM, so that a test can kill it with {@code kill
 * -9}. Arguments: AMQP URI, queue, dead-letter exchange, JDBC URL, database user, schema, and the
 * {@link HandlerKind}.
 */
public final class RabbitConsumerProcess {
  public static void main(String[] args) throws Exception {
    String user = args[4].isEmpty() ? null : args[4];
    String schema = args[5];
    HikariDataSource dataSource = InboxDataSources.pool(args[3], user, null, 4);
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(RabbitTestSupport.settings(schema).build())
            .build();
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(args[0]);
    InboxRabbitConsumer.Builder builder =
        InboxRabbitConsumer.builder()
            .connection(factory.newConnection("inbox-child-consumer"))
            .queue(args[1])
            .deadLetterExchange(args[2])
            .inbox(inbox);
    RabbitFixture.handleWith(
        builder,
        HandlerKind.valueOf(args[6]),
        new Payments(new EffectsTable(dataSource, schema), NonRetryableException::new));
    builder.build().start();
    System.out.println("consumer started");
    new CountDownLatch(1).await();
  }
}
