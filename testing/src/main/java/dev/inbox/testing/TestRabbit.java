package dev.inbox.testing;

import com.rabbitmq.client.ConnectionFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.containers.RabbitMQContainer;

/**
 * A RabbitMQ broker for this test JVM: the AMQP URI in the system property {@value #PROPERTY} or
 * the environment variable {@value #ENVIRONMENT}; then a Testcontainers RabbitMQ when Docker is
 * available; then the local broker at {@value #LOCAL_URI}. Queues get random names through {@link
 * #newQueueName}, so that runs never see each other's messages.
 */
public final class TestRabbit {
  public static final String PROPERTY = "inbox.test.amqp-uri";
  public static final String ENVIRONMENT = "INBOX_TEST_AMQP_URI";
  public static final String LOCAL_URI = "amqp://guest:guest@127.0.0.1:5672/%2F";

  private static final Logger log = LoggerFactory.getLogger(TestRabbit.class);
  private static volatile TestRabbit shared;

  private final String uri;
  private final boolean local;

  private TestRabbit(String uri, boolean local) {
    this.uri = uri;
    this.local = local;
  }

  public static TestRabbit shared() {
    TestRabbit rabbit = shared;
    if (rabbit == null) {
      synchronized (TestRabbit.class) {
        rabbit = shared;
        if (rabbit == null) {
          rabbit = start();
          shared = rabbit;
        }
      }
    }
    return rabbit;
  }

  private static TestRabbit start() {
    String explicit = Settings.explicit(PROPERTY, ENVIRONMENT);
    if (explicit != null) {
      log.info("tests use the RabbitMQ from {}", PROPERTY);
      return new TestRabbit(explicit, false);
    }
    if (Docker.isAvailable()) {
      RabbitMQContainer container = new RabbitMQContainer("rabbitmq:4-management-alpine");
      container.start();
      Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-test-rabbitmq"));
      // getAmqpUrl() has no credentials: name the container's own, rather than rely on the
      // client's guest/guest default happening to match them.
      String uri =
          "amqp://"
              + encode(container.getAdminUsername())
              + ":"
              + encode(container.getAdminPassword())
              + "@"
              + container.getHost()
              + ":"
              + container.getAmqpPort();
      return new TestRabbit(uri, false);
    }
    log.info("no Docker; tests use the local RabbitMQ at 127.0.0.1:5672");
    return new TestRabbit(LOCAL_URI, true);
  }

  private static String encode(String userInfo) {
    return URLEncoder.encode(userInfo, StandardCharsets.UTF_8);
  }

  public String uri() {
    return uri;
  }

  /** True for the machine's own broker, which {@code rabbitmqctl} can reach. */
  public boolean isLocal() {
    return local;
  }

  /** A factory with automatic recovery on and a short recovery interval. */
  public ConnectionFactory connectionFactory() {
    ConnectionFactory factory = new ConnectionFactory();
    try {
      factory.setUri(uri);
    } catch (Exception e) {
      throw new IllegalArgumentException("not an AMQP URI: " + uri, e);
    }
    factory.setAutomaticRecoveryEnabled(true);
    factory.setNetworkRecoveryInterval(500);
    return factory;
  }

  public static String newQueueName(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }
}
