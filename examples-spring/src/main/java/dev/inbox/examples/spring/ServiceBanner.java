package dev.inbox.examples.spring;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.context.event.ApplicationStartedEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Says on stdout, once the service is up (before the demo, if any, runs), what it runs against and
 * where its doors are.
 */
@Component
class ServiceBanner {

  @EventListener
  void started(ApplicationStartedEvent event) {
    ApplicationContext context = event.getApplicationContext();
    Environment env = context.getEnvironment();
    String name = context.getBean(PaymentsProperties.class).name();
    boolean embedded = context.getBeanProvider(EmbeddedKafka.Broker.class).getIfAvailable() != null;
    ConnectionFactory rabbit = context.getBean(ConnectionFactory.class);
    System.out.println(
        String.join(
            System.lineSeparator(),
            "inbox-examples-spring is up:",
            "  PostgreSQL "
                + withoutPassword(env.getProperty("spring.datasource.url"))
                + " (schema "
                + env.getProperty("spring.flyway.default-schema")
                + ")",
            "  Kafka      "
                + env.getProperty("spring.kafka.bootstrap-servers")
                + (embedded
                    ? " (an embedded KRaft broker in this JVM;"
                        + " --spring.kafka.bootstrap-servers=HOST:PORT for yours)"
                    : "")
                + ", topic and consumer group '"
                + name
                + "'",
            "  RabbitMQ   " + rabbit.getHost() + ":" + rabbit.getPort() + ", queue '" + name + "'",
            "  HTTP       POST http://127.0.0.1:"
                + env.getProperty("local.server.port")
                + "/payments (Idempotency-Key), GET /accounts/{account}"));
  }

  private static String withoutPassword(String url) {
    return url == null ? null : url.replaceAll("(?i)(password=)[^&]*", "$1***");
  }
}
