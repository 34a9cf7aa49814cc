package dev.inbox.examples;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One run of the fault suite: payments over Kafka, RabbitMQ and HTTP into one database, consumers
 * and the HTTP server in child JVMs, while {@link FaultSchedule} kills them with kill -9,
 * terminates their database backends, restarts PostgreSQL and the Kafka broker and cuts the
 * consumers' RabbitMQ connections. Of the two consumers per broker, one writes each payment on its
 * own and the other a whole batch with set-based statements ({@code --handler at-once}). Afterwards
 * it counts what took effect.
 */
final class FaultRun {
  static final String SCOPE = "demo";
  private static final String RABBIT_CONSUMER_CONNECTION = "inbox-examples-rabbit-consumer";
  private static final String POISON = "this is not a payment";

  private final FaultPlan plan;
  private final long seed;
  private final String topic = "payments";
  private final String queue = "faults-" + Long.toString(System.nanoTime(), 36);

  FaultRun(FaultPlan plan, long seed) {
    this.plan = plan;
    this.seed = seed;
  }

  FaultReport run() throws Exception {
    PaymentPlan kafka =
        PaymentPlan.generate("kafka", plan.paymentsPerBroker(), plan.duplicateRate(), seed + 1);
    PaymentPlan rabbit =
        PaymentPlan.generate("rabbit", plan.paymentsPerBroker(), plan.duplicateRate(), seed + 2);
    PaymentPlan http = PaymentPlan.generate("http", plan.httpKeys(), 0, seed + 3);
    // Every fifth HTTP payment also goes over Kafka, in the same scope: the Kafka consumer's claim
    // races the HTTP request's reservation for those keys, and either may win. They are the first
    // Kafka sends, consumed in the first seconds, while the HTTP clients send each key for the
    // first time.
    List<Payment> httpAlsoOverKafka = new ArrayList<>();
    List<Payment> httpPayments = List.copyOf(http.distinct().values());
    for (int i = 0; i < httpPayments.size(); i += 5) {
      httpAlsoOverKafka.add(httpPayments.get(i));
    }
    List<Payment> kafkaSends = new ArrayList<>(httpAlsoOverKafka);
    kafkaSends.addAll(kafka.sends());
    long expectedEffects =
        kafka.distinct().size() + rabbit.distinct().size() + http.distinct().size();
    boolean restartPostgres = plan.postgresRestarts() > 0;
    if (restartPostgres && !InfrastructureFaults.canRestartPostgres()) {
      System.out.println("PostgreSQL restart skipped: the tests' PostgreSQL is not this machine's");
      restartPostgres = false;
    }
    boolean closeRabbit = plan.rabbitConnectionCloses() > 0 && TestRabbit.shared().isLocal();
    if (plan.rabbitConnectionCloses() > 0 && !closeRabbit) {
      System.out.println("RabbitMQ connection closes skipped: rabbitmqctl reaches no broker here");
    }
    String amqpUri = TestRabbit.shared().uri();
    Path kafkaDir = Files.createTempDirectory("inbox-faults-kafka");
    ExecutorService senders = Executors.newFixedThreadPool(3);
    List<ExampleProcess> consumers = new ArrayList<>();
    ExampleProcess[] httpServer = new ExampleProcess[1];
    // The broker lives in this (the test) JVM: a fatal fault in it must fail the run, not halt
    // the JVM under Maven's feet, so Kafka's halt is turned into a printed line.
    org.apache.kafka.common.utils.Exit.setHaltProcedure(
        (code, message) ->
            System.out.println(
                "the embedded Kafka broker asked to halt (" + code + "): " + message));
    EmbeddedKafkaBroker[] broker = {EmbeddedKafkaBroker.start(0, kafkaDir)};
    int kafkaPort = broker[0].port();
    String bootstrap = broker[0].bootstrapServers();
    int httpPort = EmbeddedKafkaBroker.freePort();
    try (ScratchDatabase db = ScratchDatabase.create("faults");
        HikariDataSource dataSource = InboxDataSources.pool(db.jdbcUrl, null, null, 2)) {
      PaymentsDatabase.migrate(dataSource, InboxSettings.defaults());
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
        admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
      }
      for (int instance = 1; instance <= 2; instance++) {
        // One consumer of each broker writes per payment, the other a whole batch at once.
        String handler = instance == 1 ? "per-item" : "at-once";
        consumers.add(
            ExampleProcess.start("kafka-consumer", kafkaArgs(bootstrap, db, instance, handler)));
        consumers.add(ExampleProcess.start("rabbit-consumer", rabbitArgs(amqpUri, db, handler)));
      }
      httpServer[0] =
          ExampleProcess.start(
              "http-server",
              List.of("--port", Integer.toString(httpPort), "--jdbc-url", db.jdbcUrl));
      Future<?> kafkaSent = senders.submit(() -> sendKafka(bootstrap, kafkaSends));
      Future<?> rabbitSent = senders.submit(() -> sendRabbit(amqpUri, rabbit.sends()));
      HttpUnderFire clients =
          new HttpUnderFire(
              "http://127.0.0.1:" + httpPort,
              "demo-key",
              httpPayments,
              plan.httpClients(),
              seed + 4);
      awaitHttpServer(httpPort);
      List<Future<?>> httpDone = clients.start();

      // Children that exit on their own (a start that met a fault) are restarted, as a supervisor
      // would; the report lists them.
      List<String> selfExits = new java.util.concurrent.CopyOnWriteArrayList<>();
      ScheduledExecutorService supervisor = Executors.newSingleThreadScheduledExecutor();
      supervisor.scheduleWithFixedDelay(
          () -> supervise(consumers, httpServer[0], selfExits), 500, 500, TimeUnit.MILLISECONDS);
      Random targets = new Random(seed + 5);
      FaultSchedule schedule = new FaultSchedule(seed + 6);
      schedule.add(
          "kill -9 consumer",
          plan.consumerKills(),
          () -> {
            consumers.get(targets.nextInt(consumers.size())).kill9AndRestart();
          });
      schedule.add(
          "pg_terminate_backend",
          plan.backendTerminations(),
          () -> InfrastructureFaults.terminateBackends(db.name));
      if (restartPostgres) {
        schedule.add(
            "PostgreSQL restart", plan.postgresRestarts(), InfrastructureFaults::restartPostgres);
      }
      if (closeRabbit) {
        schedule.add(
            "RabbitMQ connection close",
            plan.rabbitConnectionCloses(),
            () -> InfrastructureFaults.closeRabbitConnections(RABBIT_CONSUMER_CONNECTION));
      }
      schedule.add(
          "Kafka broker restart",
          plan.kafkaRestarts(),
          () -> {
            broker[0].close();
            broker[0] = EmbeddedKafkaBroker.start(kafkaPort, kafkaDir);
          });
      // The HTTP server's kills follow the HTTP clients' progress, which has a pace of its own.
      FaultSchedule httpSchedule = new FaultSchedule(seed + 7);
      httpSchedule.add(
          "kill -9 HTTP server", plan.httpServerKills(), () -> httpServer[0].kill9AndRestart());
      int scheduled = schedule.size() + httpSchedule.size();

      EffectsProgress progress = new EffectsProgress(dataSource, expectedEffects);
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(25);
      Future<List<String>> httpFired =
          senders.submit(() -> httpSchedule.run(clients::progress, deadline));
      List<String> fired = new ArrayList<>(schedule.run(progress::fraction, deadline));
      fired.addAll(httpFired.get(25, TimeUnit.MINUTES));
      kafkaSent.get(5, TimeUnit.MINUTES);
      rabbitSent.get(5, TimeUnit.MINUTES);
      for (Future<?> client : httpDone) {
        client.get(10, TimeUnit.MINUTES);
      }
      Set<String> kafkaPoison = poisonKeys("kafka");
      Set<String> rabbitPoison = poisonKeys("rabbit");
      Set<String> deadLetteredKafka = new HashSet<>();
      Set<String> deadLetteredRabbit = new HashSet<>();
      while (progress.effects() < expectedEffects
          || !deadLetteredKafka.containsAll(kafkaPoison)
          || !deadLetteredRabbit.containsAll(rabbitPoison)) {
        if (System.nanoTime() > deadline) {
          break;
        }
        Thread.sleep(500);
        deadLetteredKafka.addAll(kafkaDeadLetters(bootstrap));
        deadLetteredRabbit.addAll(rabbitDeadLetters(amqpUri));
      }
      supervisor.shutdownNow();
      supervisor.awaitTermination(30, TimeUnit.SECONDS);
      for (ExampleProcess consumer : consumers) {
        consumer.close();
      }
      httpServer[0].close();
      return FaultReport.collect(
          dataSource,
          new FaultReport.Expected(
              kafka,
              rabbit,
              http,
              httpAlsoOverKafka.stream().map(Payment::paymentId).collect(Collectors.toSet()),
              kafkaPoison,
              rabbitPoison,
              scheduled,
              plan.faults()),
          new FaultReport.Observed(
              deadLetteredKafka,
              deadLetteredRabbit,
              clients.answers(),
              clients.requests(),
              fired,
              selfExits));
    } finally {
      senders.shutdownNow();
      for (ExampleProcess consumer : consumers) {
        consumer.close();
      }
      if (httpServer[0] != null) {
        httpServer[0].close();
      }
      broker[0].close();
      org.apache.kafka.common.utils.Exit.resetHaltProcedure();
      deleteQueues(amqpUri);
    }
  }

  private static void supervise(
      List<ExampleProcess> consumers, ExampleProcess httpServer, List<String> selfExits) {
    List<ExampleProcess> children = new ArrayList<>(consumers);
    children.add(httpServer);
    for (ExampleProcess child : children) {
      try {
        Integer exitCode = child.restartIfExited();
        if (exitCode != null) {
          selfExits.add(child.name() + " exited with " + exitCode + " (log " + child.log() + ")");
        }
      } catch (Exception e) {
        selfExits.add(child.name() + " could not be restarted: " + e);
      }
    }
  }

  private List<String> kafkaArgs(
      String bootstrap, ScratchDatabase db, int instance, String handler) {
    return List.of(
        "--handler",
        handler,
        "--bootstrap-servers",
        bootstrap,
        "--topic",
        topic,
        "--group",
        "faults",
        "--instance",
        Integer.toString(instance),
        "--scope",
        SCOPE,
        "--jdbc-url",
        db.jdbcUrl);
  }

  /**
   * Small batches: two consumers competing for one queue, each writing a batch's payments to the
   * same 1 000 account rows, deadlock often with large ones. The library reruns such a batch
   * without counting an attempt, but the run would crawl.
   */
  private List<String> rabbitArgs(String amqpUri, ScratchDatabase db, String handler) {
    return List.of(
        "--handler",
        handler,
        "--amqp-uri",
        amqpUri,
        "--queue",
        queue,
        "--scope",
        SCOPE,
        "--prefetch",
        "20",
        "--jdbc-url",
        db.jdbcUrl);
  }

  private Set<String> poisonKeys(String channel) {
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < plan.poisonPerBroker(); i++) {
      keys.add(channel + "-poison-" + seed + "-" + i);
    }
    return keys;
  }

  /** The payments and the poison, mixed in at random points; retries until every ack arrived. */
  private Void sendKafka(String bootstrap, List<Payment> payments) throws Exception {
    KafkaProducerCommand.send(bootstrap, topic, payments);
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            KafkaProducers.config(bootstrap), new StringSerializer(), new ByteArraySerializer())) {
      for (String key : poisonKeys("kafka")) {
        ProducerRecord<String, byte[]> record =
            new ProducerRecord<>(topic, key, POISON.getBytes(StandardCharsets.UTF_8));
        record.headers().add("idempotency-key", key.getBytes(StandardCharsets.UTF_8));
        producer.send(record).get();
      }
    }
    return null;
  }

  private Void sendRabbit(String amqpUri, List<Payment> payments) throws Exception {
    RabbitProducerCommand.send(amqpUri, queue, payments);
    try (Connection connection = connect(amqpUri);
        Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      for (String key : poisonKeys("rabbit")) {
        channel.basicPublish(
            "",
            queue,
            new AMQP.BasicProperties.Builder().messageId(key).deliveryMode(2).build(),
            POISON.getBytes(StandardCharsets.UTF_8));
      }
      channel.waitForConfirmsOrDie(30_000);
    }
    return null;
  }

  /** The original keys of everything in the dead-letter topic so far. */
  private Set<String> kafkaDeadLetters(String bootstrap) {
    Set<String> keys = new HashSet<>();
    Map<String, Object> config =
        Map.of("bootstrap.servers", bootstrap, "enable.auto.commit", false);
    try (KafkaConsumer<String, byte[]> reader =
        new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<PartitionInfo> partitions = reader.partitionsFor(topic + ".DLT", Duration.ofSeconds(5));
      if (partitions == null || partitions.isEmpty()) {
        return keys;
      }
      List<TopicPartition> assigned =
          partitions.stream().map(p -> new TopicPartition(p.topic(), p.partition())).toList();
      reader.assign(assigned);
      reader.seekToBeginning(assigned);
      Map<TopicPartition, Long> end = reader.endOffsets(assigned);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (assigned.stream().anyMatch(tp -> reader.position(tp) < end.get(tp))
          && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, byte[]> record : reader.poll(Duration.ofMillis(200))) {
          var key = record.headers().lastHeader(DeadLetterHeaders.KEY);
          keys.add(
              key == null ? "(no key header)" : new String(key.value(), StandardCharsets.UTF_8));
        }
      }
    } catch (RuntimeException e) {
      // The broker may be restarting; the next look will see more.
    }
    return keys;
  }

  /** Takes what is in the dead-letter queue (so each look sees only new arrivals). */
  private Set<String> rabbitDeadLetters(String amqpUri) {
    Set<String> keys = new HashSet<>();
    try (Connection connection = connect(amqpUri);
        Channel channel = connection.createChannel()) {
      GetResponse got;
      while ((got = channel.basicGet(queue + ".dlq", true)) != null) {
        keys.add(String.valueOf(got.getProps().getMessageId()));
      }
    } catch (Exception e) {
      // Not declared yet, or the connection was cut: the next look will see it.
    }
    return keys;
  }

  private void deleteQueues(String amqpUri) {
    try (Connection connection = connect(amqpUri);
        Channel channel = connection.createChannel()) {
      channel.queueDelete(queue);
      channel.queueDelete(queue + ".dlq");
      channel.exchangeDelete(queue + ".dlx");
    } catch (Exception e) {
      System.out.println("could not delete the run's queues: " + e);
    }
  }

  private static Connection connect(String amqpUri) throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(amqpUri);
    return factory.newConnection("inbox-fault-suite");
  }

  private static void awaitHttpServer(int port) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!DemoServices.answers("127.0.0.1", port)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the HTTP server did not start within 60 s");
      }
      Thread.sleep(100);
    }
  }

  /** Effects so far, read from the database; a failed read keeps the last value. */
  static final class EffectsProgress {
    private final HikariDataSource dataSource;
    private final long expected;
    private volatile long effects;
    private volatile long readAt;

    EffectsProgress(HikariDataSource dataSource, long expected) {
      this.dataSource = dataSource;
      this.expected = expected;
    }

    long effects() {
      if (System.nanoTime() - readAt > TimeUnit.MILLISECONDS.toNanos(200)) {
        try (var c = dataSource.getConnection();
            Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT count(*) FROM payments")) {
          rs.next();
          effects = rs.getLong(1);
        } catch (Exception e) {
          // PostgreSQL may be restarting, or this backend was just terminated.
        }
        readAt = System.nanoTime();
      }
      return effects;
    }

    double fraction() {
      return effects() / (double) expected;
    }
  }
}
