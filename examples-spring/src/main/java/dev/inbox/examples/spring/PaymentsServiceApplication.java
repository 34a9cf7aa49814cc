package dev.inbox.examples.spring;

import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The payments service on Spring Boot: payments arrive over Kafka ({@link PaymentListeners}),
 * RabbitMQ (the same class) and HTTP ({@link PaymentsController}), and each payment id takes effect
 * once, whichever door it comes through and however often.
 *
 * <p>{@code --embedded-kafka} (or no {@code spring.kafka.bootstrap-servers} at all) starts a KRaft
 * broker in this JVM first ({@link EmbeddedKafka}); {@code --demo} sends a stream of payments with
 * re-sends through all three doors, prints their effects and exits ({@link Demo}).
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class PaymentsServiceApplication {

  /** The option that runs the demo instead of serving. */
  static final String DEMO_OPTION = "--demo";

  public static void main(String[] args) {
    SpringApplication application = new SpringApplication(PaymentsServiceApplication.class);
    application.addInitializers(new EmbeddedKafka());
    boolean demo = Arrays.asList(args).contains(DEMO_OPTION);
    if (demo) {
      application.setAdditionalProfiles(Demo.PROFILE);
    }
    var context = application.run(args);
    if (demo) {
      System.exit(SpringApplication.exit(context));
    }
  }
}
