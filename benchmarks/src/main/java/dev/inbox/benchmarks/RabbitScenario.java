package dev.inbox.benchmarks;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.MessageProperties;
import dev.inbox.Inbox;
import dev.inbox.InboxSettings;
import dev.inbox.rabbit.DeliveryKeyExtractor;
import dev.inbox.rabbit.InboxRabbitConsumer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The {@code rabbit} scenario: each run publishes the workload with confirms to a fresh durable
 * queue (persistent messages, messageId = payment id), then times consuming all of it. {@code
 * inbox} is the rabbit-adapter's {@link InboxRabbitConsumer}. {@code plain} is a hand-written
 * manual-ack consumer batched the same way (the same prefetch, a batch is what arrived within the
 * same linger after its first delivery), one transaction per batch, then one {@code multiple} ack,
 * with duplicates filtered by an in-memory set: the upper bound. With {@code --handler at-once}
 * both write each batch's new payments with one set-based statement, the inbox through a {@link
 * dev.inbox.rabbit.NewDeliveriesHandler}. The queue is deleted after each run.
 *
 * <p>A run is timed from {@code basicConsume} until the last batch is acknowledged and the channel
 * closed; it is correct when the payments check out and the closed channel left nothing unacked.
 * The variants take turns run by run ({@link InterleavedRuns}).
 */
final class RabbitScenario {
  /** The adapter's default linger, used by both variants. */
  static final long LINGER_MILLIS = 5;

  private static final long RUN_TIMEOUT_MINUTES = 10;

  private final DataSource dataSource;
  private final Workload workload;
  private final Connection connection;
  private final PaymentsSchema payments = new PaymentsSchema("bench_rabbit");

  /** The prefetch of both variants, and so the largest batch. */
  private final int prefetch;

  RabbitScenario(DataSource dataSource, Workload workload, Connection connection, int prefetch) {
    this.dataSource = dataSource;
    this.workload = workload;
    this.connection = connection;
    this.prefetch = prefetch;
  }

  static Connection connect(String amqpUri) throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(amqpUri);
    return factory.newConnection("inbox-benchmarks");
  }

  static boolean runAll(BenchmarkRun run) throws Exception {
    try (Connection connection = connect(run.options.amqpUri)) {
      return new RabbitScenario(run.dataSource, run.workload, connection, run.options.prefetch)
          .measure(run);
    }
  }

  private boolean measure(BenchmarkRun run) throws Exception {
    return run.printThroughput(
        JsonLine.scenario("rabbit").put("handler", run.options.handler),
        "prefetch",
        prefetch,
        "ratio_vs_plain",
        InterleavedRuns.repeat(
            run, List.of("plain", "inbox"), variant -> run(variant, run.options.handlerAtOnce())));
  }

  /**
   * One timed run of one variant on a fresh queue, checked and deleted afterwards.
   *
   * @param atOnce {@code --handler at-once}: each batch's new payments written in one statement
   */
  Measurement run(String variant, boolean atOnce) throws Exception {
    payments.reset(dataSource);
    String queue = "bench-rabbit-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
    try (Channel admin = connection.createChannel()) {
      admin.queueDeclare(queue, true, false, false, null);
      try {
        publish(queue);
        double seconds =
            variant.equals("inbox") ? runInbox(queue, atOnce) : runPlain(queue, atOnce);
        boolean drained = admin.queueDeclarePassive(queue).getMessageCount() == 0;
        return new Measurement(seconds, drained && payments.correct(dataSource, workload));
      } finally {
        admin.queueDelete(queue);
      }
    }
  }

  /** Publishes the workload in order, re-sends included, and waits for every confirm. */
  private void publish(String queue) throws Exception {
    try (Channel channel = connection.createChannel()) {
      channel.confirmSelect();
      int unconfirmed = 0;
      for (Workload.Payment payment : workload.messages) {
        AMQP.BasicProperties properties =
            MessageProperties.PERSISTENT_BASIC.builder().messageId(payment.id()).build();
        channel.basicPublish("", queue, properties, PaymentCodec.body(payment));
        if (++unconfirmed == 1_000) {
          channel.waitForConfirmsOrDie(60_000);
          unconfirmed = 0;
        }
      }
      channel.waitForConfirmsOrDie(60_000);
    }
  }

  private double runInbox(String queue, boolean atOnce) throws Exception {
    InboxSettings settings =
        InboxSettings.builder().schema(payments.schema).janitorInterval(Duration.ZERO).build();
    long total = workload.messages.size();
    AtomicLong seen = new AtomicLong();
    CountDownLatch allTaken = new CountDownLatch(1);
    DeliveryKeyExtractor keys = DeliveryKeyExtractor.messageIdOrHeader();
    try (Inbox inbox =
        Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build()) {
      InboxRabbitConsumer.Builder builder =
          InboxRabbitConsumer.builder()
              .connection(connection)
              .queue(queue)
              .inbox(inbox)
              .prefetch(prefetch)
              .linger(Duration.ofMillis(LINGER_MILLIS))
              // The key of every delivery is read once, as its batch starts: when the last one
              // is read, the last batch is in flight, and close() finishes and acks it.
              .keyExtractor(
                  delivery -> {
                    if (seen.incrementAndGet() == total) {
                      allTaken.countDown();
                    }
                    return keys.keyOf(delivery);
                  });
      InboxRabbitConsumer consumer =
          (atOnce
                  ? builder.newDeliveriesHandler(
                      (deliveries, tx) -> payments.applyAll(tx, paymentsOf(deliveries)))
                  : builder.handler((delivery, tx) -> payments.apply(tx, payment(delivery))))
              .build();
      long start = System.nanoTime();
      consumer.start();
      try {
        if (!allTaken.await(RUN_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
          throw new IllegalStateException(
              "the inbox consumer did not take all deliveries of " + queue);
        }
      } finally {
        consumer.close();
      }
      return (System.nanoTime() - start) / 1e9;
    }
  }

  /** Takes a batch, applies each new payment of it in one transaction, commits, acks the batch. */
  private double runPlain(String queue, boolean atOnce) throws Exception {
    Set<String> seen = new HashSet<>();
    long total = workload.messages.size();
    long consumed = 0;
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(RUN_TIMEOUT_MINUTES);
    BlockingQueue<Delivery> buffer = new LinkedBlockingQueue<>();
    long start = System.nanoTime();
    try (java.sql.Connection tx = dataSource.getConnection();
        Channel channel = connection.createChannel()) {
      tx.setAutoCommit(false);
      channel.basicQos(prefetch);
      String tag = channel.basicConsume(queue, false, (t, d) -> buffer.add(d), t -> {});
      while (consumed < total) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "the plain consumer did not take all deliveries of " + queue);
        }
        List<Delivery> batch = nextBatch(buffer);
        if (batch.isEmpty()) {
          continue;
        }
        long lastTag = 0;
        List<Workload.Payment> newPayments = new ArrayList<>();
        for (Delivery delivery : batch) {
          Workload.Payment payment = payment(delivery);
          if (seen.add(payment.id())) {
            if (atOnce) {
              newPayments.add(payment);
            } else {
              payments.apply(tx, payment);
            }
          }
          lastTag = Math.max(lastTag, delivery.getEnvelope().getDeliveryTag());
        }
        if (!newPayments.isEmpty()) {
          payments.applyAll(tx, newPayments);
        }
        tx.commit();
        channel.basicAck(lastTag, true);
        consumed += batch.size();
      }
      channel.basicCancel(tag);
    }
    return (System.nanoTime() - start) / 1e9;
  }

  private static List<Workload.Payment> paymentsOf(List<Delivery> deliveries) {
    List<Workload.Payment> list = new ArrayList<>(deliveries.size());
    for (Delivery delivery : deliveries) {
      list.add(payment(delivery));
    }
    return list;
  }

  /** The payment a delivery carries: its messageId and body. */
  private static Workload.Payment payment(Delivery delivery) {
    return PaymentCodec.payment(delivery.getProperties().getMessageId(), delivery.getBody());
  }

  /** The first delivery to arrive, then whatever else arrives within the linger. */
  private List<Delivery> nextBatch(BlockingQueue<Delivery> buffer) throws InterruptedException {
    List<Delivery> batch = new ArrayList<>();
    Delivery first = buffer.poll(100, TimeUnit.MILLISECONDS);
    if (first == null) {
      return batch;
    }
    batch.add(first);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS);
    while (batch.size() < prefetch) {
      buffer.drainTo(batch, prefetch - batch.size());
      long remaining = deadline - System.nanoTime();
      if (batch.size() >= prefetch || remaining <= 0) {
        break;
      }
      Delivery next = buffer.poll(remaining, TimeUnit.NANOSECONDS);
      if (next == null) {
        break;
      }
      batch.add(next);
    }
    return batch;
  }
}
