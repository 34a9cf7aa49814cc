package dev.inbox.examples.spring;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.context.annotation.Profile;
import org.springframework.core.env.Environment;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * {@code --demo}: sends a stream of payments through the service's three doors, a share of them
 * re-sent through a door chosen at random (often another one), waits until every message has been
 * consumed and acknowledged, prints what took effect, and exits 0 only if every payment took effect
 * exactly once. It runs in the service's own JVM, against the doors a client would use.
 */
@Component
@Profile(Demo.PROFILE)
class Demo implements ApplicationRunner, ExitCodeGenerator {
  static final String PROFILE = "demo";

  private enum Door {
    KAFKA,
    RABBITMQ,
    HTTP
  }

  private record Send(int payment, Door door) {}

  private final PaymentsProperties properties;
  private final Payments payments;
  private final KafkaTemplate<String, String> kafka;
  private final KafkaAdmin kafkaAdmin;
  private final KafkaListenerEndpointRegistry kafkaListeners;
  private final RabbitTemplate rabbit;
  private final AmqpAdmin rabbitAdmin;
  private final RabbitListenerEndpointRegistry rabbitListeners;
  private final int count;
  private final int resendPercent;
  private final long seed;
  private final Duration timeout;
  private final Environment environment;
  private final HttpClient http = HttpClient.newHttpClient();
  private int exitCode = 1;

  Demo(
      PaymentsProperties properties,
      Payments payments,
      KafkaTemplate<String, String> kafka,
      KafkaAdmin kafkaAdmin,
      KafkaListenerEndpointRegistry kafkaListeners,
      RabbitTemplate rabbit,
      AmqpAdmin rabbitAdmin,
      RabbitListenerEndpointRegistry rabbitListeners,
      @Value("${demo.payments:1000}") int count,
      @Value("${demo.resend-percent:20}") int resendPercent,
      @Value("${demo.seed:7}") long seed,
      @Value("${demo.timeout:5m}") Duration timeout,
      Environment environment) {
    this.properties = properties;
    this.payments = payments;
    this.kafka = kafka;
    this.kafkaAdmin = kafkaAdmin;
    this.kafkaListeners = kafkaListeners;
    this.rabbit = rabbit;
    this.rabbitAdmin = rabbitAdmin;
    this.rabbitListeners = rabbitListeners;
    this.count = count;
    this.resendPercent = resendPercent;
    this.seed = seed;
    this.timeout = timeout;
    this.environment = environment;
  }

  @Override
  public void run(ApplicationArguments args) throws Exception {
    String run = "demo-" + UUID.randomUUID().toString().substring(0, 8);
    Random random = new Random(seed);
    List<Long> amounts = new ArrayList<>();
    List<Send> sends = new ArrayList<>();
    Door[] doors = Door.values();
    for (int i = 0; i < count; i++) {
      amounts.add(1L + random.nextInt(10_000));
      sends.add(new Send(i, doors[random.nextInt(doors.length)]));
      if (random.nextInt(100) < resendPercent) {
        sends.add(new Send(i, doors[random.nextInt(doors.length)]));
      }
    }
    Collections.shuffle(sends, random);
    System.out.printf(
        "demo %s: %d payments, %d sends through Kafka, RabbitMQ and HTTP (%d%% re-sent)%n",
        run, count, sends.size(), resendPercent);

    int[] perDoor = new int[doors.length];
    int replayed = 0;
    List<CompletableFuture<?>> kafkaSends = new ArrayList<>();
    for (Send send : sends) {
      String id = run + "-p" + send.payment();
      String account = run + "-acc-" + (send.payment() % 10);
      String body =
          "{\"account\":\"" + account + "\",\"amountCents\":" + amounts.get(send.payment()) + "}";
      perDoor[send.door().ordinal()]++;
      switch (send.door()) {
        case KAFKA -> kafkaSends.add(sendKafka(id, account, body));
        case RABBITMQ -> sendRabbit(id, body);
        case HTTP -> replayed += sendHttp(id, body) ? 1 : 0;
      }
    }
    CompletableFuture.allOf(kafkaSends.toArray(CompletableFuture[]::new)).get();

    awaitCondition("every payment id to take effect", () -> distinctIds(run) >= count);
    awaitCondition("the consumer group to commit every record", this::kafkaCaughtUp);
    awaitCondition("the queue to be empty", () -> rabbitMessages() == 0);
    // Stopping the containers lets in-flight messages finish and be acknowledged; a message left
    // unacknowledged would be back in the queue now.
    kafkaListeners.stop();
    rabbitListeners.stop();
    long leftInQueue = rabbitMessages();

    long expectedSum = amounts.stream().mapToLong(Long::longValue).sum();
    Map<String, Object> totals = payments.totals(run + "-");
    long rows = ((Number) totals.get("rows")).longValue();
    long distinct = ((Number) totals.get("distinct_ids")).longValue();
    long amountSum = ((Number) totals.get("amount_sum")).longValue();
    long balanceSum = ((Number) totals.get("balance_sum")).longValue();
    boolean exact =
        rows == count
            && distinct == count
            && amountSum == expectedSum
            && balanceSum == expectedSum
            && leftInQueue == 0;
    System.out.printf(
        "  sent            Kafka %d, RabbitMQ %d, HTTP %d (%d HTTP answers replayed)%n"
            + "  payment rows    %d (expected %d, one per payment id)%n"
            + "  doubled         %d%n"
            + "  lost            %d%n"
            + "  sum of payments %d (expected %d)%n"
            + "  sum of balances %d (expected %d)%n"
            + "  left in queue   %d%n"
            + "exactly once: %s%n",
        perDoor[Door.KAFKA.ordinal()],
        perDoor[Door.RABBITMQ.ordinal()],
        perDoor[Door.HTTP.ordinal()],
        replayed,
        rows,
        count,
        rows - distinct,
        count - distinct,
        amountSum,
        expectedSum,
        balanceSum,
        expectedSum,
        leftInQueue,
        exact ? "yes" : "NO");
    exitCode = exact ? 0 : 1;
  }

  @Override
  public int getExitCode() {
    return exitCode;
  }

  private CompletableFuture<?> sendKafka(String id, String account, String body) {
    ProducerRecord<String, String> record = new ProducerRecord<>(properties.name(), account, body);
    record.headers().add(PaymentListeners.KEY_HEADER, id.getBytes(StandardCharsets.UTF_8));
    return kafka.send(record);
  }

  private void sendRabbit(String id, String body) {
    rabbit.send(
        "",
        properties.name(),
        MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
            .setMessageId(id)
            .setContentType("application/json")
            .build());
  }

  /**
   * Returns whether the answer was a replay: the first answer again, or, for a payment that came
   * through a listener first (which stores no answer), 200 "already-processed". Anything else stops
   * the demo.
   */
  private boolean sendHttp(String id, String body) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(baseUrl() + "/payments"))
                .header("Idempotency-Key", id)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    boolean replayed =
        response.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
    if (response.statusCode() != 201 && !(replayed && response.statusCode() == 200)) {
      throw new IllegalStateException(
          "POST /payments of "
              + id
              + " answered "
              + response.statusCode()
              + ": "
              + response.body());
    }
    return replayed;
  }

  /** The web server's port is known once it has started, after this bean was made. */
  private String baseUrl() {
    return "http://127.0.0.1:" + environment.getRequiredProperty("local.server.port");
  }

  private long distinctIds(String run) {
    return ((Number) payments.totals(run + "-").get("distinct_ids")).longValue();
  }

  private boolean kafkaCaughtUp() {
    try (Admin admin = Admin.create(kafkaAdmin.getConfigurationProperties())) {
      return ConsumerGroups.caughtUp(admin, properties.name(), properties.name());
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot read the consumer group's offsets", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading the consumer group's offsets", e);
    }
  }

  private long rabbitMessages() {
    var queue = rabbitAdmin.getQueueInfo(properties.name());
    if (queue == null) {
      throw new IllegalStateException("the queue " + properties.name() + " is gone");
    }
    return queue.getMessageCount();
  }

  private void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("gave up after " + timeout + " waiting for " + what);
      }
      Thread.sleep(200);
    }
  }
}
