package dev.inbox.examples;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import dev.inbox.rabbit.RabbitTopology;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/** One run of the demo, from starting the consumers to the final check. */
final class DemoRun {
  private final DemoServices services;
  private final HikariDataSource dataSource;
  private final InboxSettings settings;
  private final DemoPlan plan;
  private final int timeoutSeconds;
  private final boolean killMidway;
  private final PrintStream out;
  private final String topic;
  private final String queue;

  DemoRun(
      DemoServices services,
      HikariDataSource dataSource,
      InboxSettings settings,
      DemoPlan plan,
      int timeoutSeconds,
      boolean killMidway,
      PrintStream out) {
    this.services = services;
    this.dataSource = dataSource;
    this.settings = settings;
    this.plan = plan;
    this.timeoutSeconds = timeoutSeconds;
    this.killMidway = killMidway;
    this.out = out;
    String run = Long.toString(System.currentTimeMillis(), 36);
    this.topic = "inbox-demo-payments-" + run;
    this.queue = "inbox-demo-payments-" + run;
  }

  int run() throws Exception {
    createTopic();
    List<ExampleProcess> children = new ArrayList<>();
    ExecutorService senders = Executors.newFixedThreadPool(10);
    long start = System.nanoTime();
    try (Inbox inbox = Inbox.builder().dataSource(dataSource).settings(settings).build();
        PaymentsApi api =
            PaymentsApi.start(
                0, dataSource, inbox, Map.of(DemoCommand.API_KEY, DemoCommand.SCOPE))) {
      ExampleProcess kafkaConsumer = ExampleProcess.start("kafka-consumer", kafkaConsumerArgs());
      children.add(kafkaConsumer);
      children.add(ExampleProcess.start("rabbit-consumer", rabbitConsumerArgs()));
      out.printf(
          "Sending %d payments (%d distinct): Kafka %d, RabbitMQ %d, HTTP %d; %d of the HTTP payments also over Kafka.%n",
          plan.sent(),
          plan.expectedDistinct(),
          plan.kafkaSends().size(),
          plan.rabbit().sends().size(),
          plan.http().sends().size(),
          plan.crossChannel().size());
      List<Future<?>> sending = new ArrayList<>();
      sending.add(
          senders.submit(
              () -> {
                KafkaProducerCommand.send(services.bootstrapServers, topic, plan.kafkaSends());
                return null;
              }));
      sending.add(
          senders.submit(
              () -> {
                RabbitProducerCommand.send(services.amqpUri, queue, plan.rabbit().sends());
                return null;
              }));
      ConcurrentLinkedQueue<Payment> httpQueue = new ConcurrentLinkedQueue<>(plan.http().sends());
      ConcurrentLinkedQueue<String> httpErrors = new ConcurrentLinkedQueue<>();
      for (int i = 0; i < 8; i++) {
        sending.add(
            senders.submit(
                () -> {
                  PaymentsHttpClient client =
                      new PaymentsHttpClient(api.baseUri(), DemoCommand.API_KEY);
                  Payment payment;
                  while ((payment = httpQueue.poll()) != null) {
                    HttpResponse<String> response = client.post(payment);
                    // 200 with Idempotent-Replayed: the same payment already arrived over Kafka.
                    if (response.statusCode() != 201 && response.statusCode() != 200) {
                      httpErrors.add(
                          payment.paymentId()
                              + " -> "
                              + response.statusCode()
                              + " "
                              + response.body());
                    }
                  }
                  return null;
                }));
      }
      boolean converged = awaitEffects(kafkaConsumer, start);
      for (Future<?> send : sending) {
        send.get(timeoutSeconds, TimeUnit.SECONDS);
      }
      settle();
      double seconds = (System.nanoTime() - start) / 1e9;
      boolean correct = report(seconds, httpErrors);
      return converged && correct && httpErrors.isEmpty() ? 0 : 1;
    } finally {
      senders.shutdownNow();
      for (ExampleProcess child : children) {
        child.close();
      }
      deleteQueues();
    }
  }

  /** The run's queues live on the user's broker, so they go when the run is over. */
  private void deleteQueues() {
    try (Connection connection = Amqp.connect(services.amqpUri, "inbox-demo-cleanup");
        Channel channel = connection.createChannel()) {
      RabbitTopology.Names names = RabbitTopology.names(queue);
      channel.queueDelete(names.queue());
      channel.queueDelete(names.deadLetterQueue());
      channel.exchangeDelete(names.deadLetterExchange());
    } catch (Exception e) {
      out.println(
          "Could not delete the demo's queues "
              + queue
              + "*: "
              + InboxDataSources.maskPasswords(e.toString()));
    }
  }

  /**
   * Waits until every distinct payment took effect, killing and restarting the Kafka consumer
   * midway.
   */
  private boolean awaitEffects(ExampleProcess kafkaConsumer, long start) throws Exception {
    ProgressBar bar = new ProgressBar(out, "effects");
    long expected = plan.expectedDistinct();
    boolean killed = !killMidway;
    long deadline = start + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    long done = 0;
    String note = "";
    while (System.nanoTime() < deadline) {
      done = PaymentsDatabase.totals(dataSource).distinctPaymentIds();
      if (!killed && done >= expected / 2) {
        kafkaConsumer.kill9();
        note = "(Kafka consumer killed with kill -9 at " + done + " and restarted)";
        kafkaConsumer.restart();
        killed = true;
      }
      bar.show(done, expected, note);
      if (done >= expected) {
        bar.finish();
        return true;
      }
      Thread.sleep(250);
    }
    bar.finish();
    out.printf(
        "Timed out after %d s with %d of %d payments applied.%n", timeoutSeconds, done, expected);
    return false;
  }

  /** Lets late redeliveries arrive, so that a doubled effect would show up before the check. */
  private void settle() throws Exception {
    long previous = -1;
    for (int stable = 0; stable < 8; ) {
      long rows = PaymentsDatabase.totals(dataSource).paymentRows();
      stable = rows == previous ? stable + 1 : 0;
      previous = rows;
      Thread.sleep(250);
    }
  }

  private boolean report(double seconds, ConcurrentLinkedQueue<String> httpErrors)
      throws Exception {
    PaymentsDatabase.Totals totals = PaymentsDatabase.totals(dataSource);
    out.println();
    out.printf(
        "%-8s %10s %12s %10s %12s%n", "channel", "sent", "duplicates", "effects", "suppressed");
    long kafkaEffects = PaymentsDatabase.rows(dataSource, "kafka");
    long rabbitEffects = PaymentsDatabase.rows(dataSource, "rabbit");
    long httpEffects = PaymentsDatabase.rows(dataSource, "http");
    line(
        "kafka",
        plan.kafkaSends().size(),
        plan.kafkaSends().size() - plan.kafka().distinct().size(),
        kafkaEffects);
    line(
        "rabbit",
        plan.rabbit().sends().size(),
        plan.rabbit().sends().size() - plan.rabbit().distinct().size(),
        rabbitEffects);
    line(
        "http",
        plan.http().sends().size(),
        plan.http().sends().size() - plan.http().distinct().size(),
        httpEffects);
    line("total", plan.sent(), plan.sent() - plan.expectedDistinct(), totals.paymentRows());
    out.printf(
        "%nThroughput: %.0f effects/s over %.1f s, with the Kafka consumer killed once.%n",
        totals.paymentRows() / seconds, seconds);
    boolean rowsOk = totals.paymentRows() == plan.expectedDistinct();
    boolean idsOk =
        totals.distinctPaymentIds() == plan.expectedDistinct() && totals.doubledPaymentIds() == 0;
    boolean sumOk =
        totals.balanceSum() == plan.expectedSumCents()
            && totals.paymentSum() == plan.expectedSumCents();
    out.println();
    check(
        "payment rows equal distinct payments",
        totals.paymentRows(),
        plan.expectedDistinct(),
        rowsOk);
    check(
        "payments applied more than once",
        totals.doubledPaymentIds(),
        0,
        totals.doubledPaymentIds() == 0);
    check("distinct payments applied", totals.distinctPaymentIds(), plan.expectedDistinct(), idsOk);
    check("sum of account balances (cents)", totals.balanceSum(), plan.expectedSumCents(), sumOk);
    if (!httpErrors.isEmpty()) {
      out.println(
          "HTTP requests without a 201: " + httpErrors.size() + ", first: " + httpErrors.peek());
    }
    boolean exactlyOnce = rowsOk && idsOk && sumOk;
    out.println(
        exactlyOnce
            ? "EXACTLY ONCE: every payment took effect once."
            : "FAILED: effects were not exactly once.");
    return exactlyOnce;
  }

  private void line(String channel, long sent, long duplicates, long effects) {
    out.printf("%-8s %10d %12d %10d %12d%n", channel, sent, duplicates, effects, sent - effects);
  }

  private void check(String what, long actual, long expected, boolean ok) {
    out.printf("  [%s] %s: %d (expected %d)%n", ok ? "ok" : "FAIL", what, actual, expected);
  }

  private void createTopic() throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, services.bootstrapServers))) {
      admin
          .createTopics(List.of(new NewTopic(topic, 4, (short) 1)))
          .all()
          .get(60, TimeUnit.SECONDS);
    }
  }

  private List<String> kafkaConsumerArgs() {
    return List.of(
        "--bootstrap-servers", services.bootstrapServers,
        "--topic", topic,
        "--group", "inbox-demo",
        "--scope", DemoCommand.SCOPE,
        "--jdbc-url", services.jdbcUrl);
  }

  private List<String> rabbitConsumerArgs() {
    return List.of(
        "--amqp-uri", services.amqpUri,
        "--queue", queue,
        "--scope", DemoCommand.SCOPE,
        "--jdbc-url", services.jdbcUrl);
  }
}
