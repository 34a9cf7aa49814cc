package dev.inbox.benchmarks.spring;

import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaConsumerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The application each run boots: Boot's auto-configuration (DataSource, transaction manager,
 * Spring Kafka, and the inbox starter) and the listener that {@code bench.listener} names ({@link
 * PaymentListener}, {@link BatchPaymentListener}). Its consumers report to the run's {@link
 * RunProgress}, a bean registered before the context refreshes.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({PaymentWrites.class, PaymentListener.class, BatchPaymentListener.class})
class BenchmarkApplication {

  @Bean
  DefaultKafkaConsumerFactoryCustomizer runProgressInterceptor(RunProgress progress) {
    return factory ->
        factory.updateConfigs(
            Map.of(
                ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG,
                RunProgress.Interceptor.class.getName(),
                RunProgress.CONFIG,
                progress));
  }
}
