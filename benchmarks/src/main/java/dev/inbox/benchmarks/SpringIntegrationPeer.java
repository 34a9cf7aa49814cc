package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.integration.channel.DirectChannel;
import org.springframework.integration.channel.NullChannel;
import org.springframework.integration.handler.advice.IdempotentReceiverInterceptor;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.integration.selector.MetadataStoreSelector;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.messaging.MessageHandler;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring Integration's {@link IdempotentReceiverInterceptor} with a {@link MetadataStoreSelector}
 * on a {@link JdbcMetadataStore}, advising the handler of a {@link DirectChannel} as {@code
 * ConsumerEndpointFactoryBean} does; duplicates go to a {@link NullChannel}. Each send runs in a
 * Spring transaction, which the store's {@code JdbcTemplate} and the business write join, as they
 * would under a transactional message-driven adapter.
 */
final class SpringIntegrationPeer implements Peer {
  private static final String ID_HEADER = "paymentId";

  private final TransactionTemplate transaction;
  private final DirectChannel channel = new DirectChannel();

  SpringIntegrationPeer(DataSource dataSource, PaymentsSchema payments) throws SQLException {
    // INT_METADATA_STORE as in spring-integration-jdbc's schema-postgresql.sql.
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE "
              + payments.schema
              + ".INT_METADATA_STORE (METADATA_KEY VARCHAR(255) NOT NULL,"
              + " METADATA_VALUE VARCHAR(4000), REGION VARCHAR(100) NOT NULL,"
              + " constraint INT_METADATA_STORE_PK primary key (METADATA_KEY, REGION))");
    }
    transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    JdbcTemplate jdbc = new JdbcTemplate(dataSource);

    JdbcMetadataStore store = new JdbcMetadataStore(jdbc);
    store.setTablePrefix(payments.schema + ".INT_");
    store.afterPropertiesSet();
    store.start();
    MetadataStoreSelector selector =
        new MetadataStoreSelector(
            message -> message.getHeaders().get(ID_HEADER, String.class), store);
    IdempotentReceiverInterceptor idempotent = new IdempotentReceiverInterceptor(selector);
    idempotent.setDiscardChannel(new NullChannel());

    MessageHandler business =
        message ->
            jdbc.execute(
                (ConnectionCallback<Void>)
                    tx -> {
                      payments.apply(tx, (Workload.Payment) message.getPayload());
                      return null;
                    });
    ProxyFactory proxy = new ProxyFactory(business);
    proxy.addAdvice(idempotent);
    channel.subscribe((MessageHandler) proxy.getProxy());
  }

  @Override
  public void consume(Workload.Payment payment) {
    transaction.executeWithoutResult(
        status ->
            channel.send(
                MessageBuilder.withPayload(payment).setHeader(ID_HEADER, payment.id()).build()));
  }
}
