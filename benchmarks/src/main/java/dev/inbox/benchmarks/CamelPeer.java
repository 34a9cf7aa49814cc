package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.Statement;
import javax.sql.DataSource;
import org.apache.camel.CamelContext;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.apache.camel.spring.spi.SpringTransactionPolicy;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Apache Camel's Idempotent Consumer EIP with camel-sql's {@link JdbcMessageIdRepository}, on a
 * transacted route: the repository's {@code PROPAGATION_REQUIRED} template joins the route's Spring
 * transaction, so the id row and the business write commit together. A {@link ProducerTemplate}
 * sends the payments one by one to a {@code direct:} endpoint.
 */
final class CamelPeer implements Peer {
  static final String ID_HEADER = "paymentId";
  private static final String ENDPOINT = "direct:payments";

  private final CamelContext camel;
  private final ProducerTemplate producer;

  CamelPeer(DataSource dataSource, PaymentsSchema payments) throws Exception {
    String table = payments.schema + ".camel_messageprocessed";
    // The repository's documented columns, plus the primary key its lookup needs: without it every
    // message scans the whole table.
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE "
              + table
              + " (processorName VARCHAR(255) NOT NULL, messageId VARCHAR(100) NOT NULL,"
              + " createdAt TIMESTAMP, PRIMARY KEY (processorName, messageId))");
    }
    DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
    JdbcMessageIdRepository repository =
        new JdbcMessageIdRepository(dataSource, new TransactionTemplate(transactions), "payments");
    repository.setTableName(table);
    repository.setCreateTableIfNotExists(false);
    JdbcTemplate jdbc = new JdbcTemplate(dataSource);

    camel = new DefaultCamelContext();
    camel.getRegistry().bind("PROPAGATION_REQUIRED", new SpringTransactionPolicy(transactions));
    camel.addRoutes(
        new RouteBuilder() {
          @Override
          public void configure() {
            from(ENDPOINT)
                .transacted()
                .idempotentConsumer(header(ID_HEADER), repository)
                .process(
                    exchange -> {
                      Workload.Payment payment =
                          exchange.getMessage().getBody(Workload.Payment.class);
                      jdbc.execute(
                          (ConnectionCallback<Void>)
                              tx -> {
                                payments.apply(tx, payment);
                                return null;
                              });
                    });
          }
        });
    camel.start();
    producer = camel.createProducerTemplate();
  }

  /** Throws Camel's {@code CamelExecutionException} when the route failed. */
  @Override
  public void consume(Workload.Payment payment) {
    producer.sendBodyAndHeader(ENDPOINT, payment, ID_HEADER, payment.id());
  }

  @Override
  public void close() throws Exception {
    camel.close();
  }
}
