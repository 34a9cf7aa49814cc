package dev.inbox.rabbit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.ShutdownSignalException;
import dev.inbox.BatchFailurePolicy;
import dev.inbox.BatchHandler;
import dev.inbox.BatchItem;
import dev.inbox.BatchResult;
import dev.inbox.DeadLetterHeaders;
import dev.inbox.Disposition;
import dev.inbox.Inbox;
import dev.inbox.InboxKeys;
import dev.inbox.ItemResult;
import dev.inbox.internal.Fingerprints;
import dev.inbox.internal.HandlerError;
import dev.inbox.rabbit.micrometer.MicrometerRabbitConsumerListener;
import dev.inbox.rabbit.spi.RabbitConsumerListener;
import dev.inbox.spi.Listeners;
import dev.inbox.spi.MessageOutcome;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A RabbitMQ consumer whose deliveries take effect exactly once.
 *
 * <p>Deliveries are gathered up to the prefetch count or a short linger, their keys are claimed in
 * one inbox transaction, the handler runs for the new ones, the transaction commits, and only then
 * are they acknowledged, with one {@code multiple=true} ack when the whole batch settled. A
 * delivery whose commit succeeded but whose ack was lost (a dropped connection, a crash) comes back
 * as a redelivery, is recognised as a duplicate, and is acknowledged without running the handler.
 *
 * <p>A failed delivery is nacked with requeue until its attempts, counted in the inbox (classic
 * queues do not count redeliveries) or by a quorum queue's {@code x-delivery-count}, reach {@code
 * maxAttempts}; a delivery whose handler threw {@link dev.inbox.NonRetryableException} goes at
 * once. {@link Disposition} decides which. It is then dead-lettered: republished with reason
 * headers to {@link Builder#deadLetterExchange} when one is set, else rejected without requeue so
 * that the queue's own {@code x-dead-letter-exchange} receives it. A dead letter that cannot be
 * published (no such exchange, no confirm) is logged at ERROR and counted ({@code
 * outcome=dead_letter_failed}, never {@code dead_lettered}), and its delivery is requeued after a
 * backoff (200 ms, doubling up to 5 s while the failures go on), never lost. A handler that throws
 * an {@link Error} (a {@code StackOverflowError}, say) fails the attempt like any exception.
 *
 * <p>By default each delivery's body is fingerprinted (SHA-256, tagged as a message fingerprint),
 * so that a key re-sent with a different body is dead-lettered with reason {@code mismatch} instead
 * of being acknowledged as a duplicate.
 *
 * <p>One thread owns the channels, as in reactor-kafka's {@code ConsumerEventLoop}: the worker
 * thread ({@code inbox-rabbit-<queue>}) makes every ack, nack and reject on the consuming channel
 * and every publish on the dead-letter channel, and keeps the held deliveries unshared. The
 * client's dispatch thread only hands each delivery to the worker through a queue. {@link #start()}
 * opens the channels and registers the consumer before the worker has a delivery to settle, and
 * {@link #close()} closes them once the worker has finished its batch (or after 30 s without it).
 *
 * <p>Should the worker meet anything it cannot handle, the consumer stops visibly instead of
 * holding its prefetched deliveries: it logs at ERROR, cancels its consumer and closes its channel
 * (the broker requeues the unacknowledged deliveries for other consumers), reports {@link
 * #isRunning()} false and the cause in {@link #failure()}, and calls {@link Builder#onFailure}. It
 * stops the same way when the broker closes its channel (a channel error, such as {@code
 * PRECONDITION_FAILED} on a consumer acknowledgement timeout), with the {@link
 * com.rabbitmq.client.ShutdownSignalException} as the cause: automatic recovery reopens a lost
 * connection and the consumer with it, but never a channel the broker closed; and so it also stops
 * when it loses a connection without automatic recovery, or one the application closed.
 */
public final class InboxRabbitConsumer implements AutoCloseable {
  /**
   * The prefetch, and so the largest batch, unless the builder sets one: Spring AMQP's default. At
   * 100 the inbox consumer reached 0.74 of a plain consumer's throughput in the benchmarks, at 250
   * 0.94: a larger batch spreads the claim's round trip and commit over more deliveries.
   */
  public static final int DEFAULT_PREFETCH = 250;

  /**
   * The queue the delivery was consumed from: the one header of a dead letter that is RabbitMQ's
   * own; the others are the {@link DeadLetterHeaders} of every adapter.
   */
  public static final String ORIGINAL_QUEUE_HEADER = "x-inbox-original-queue";

  private static final Logger log = LoggerFactory.getLogger(InboxRabbitConsumer.class);

  /** How long {@link #close()} waits for the batch in flight. */
  private static final long CLOSE_TIMEOUT_MILLIS = 30_000;

  private final Connection connection;
  private final String queue;
  private final Inbox inbox;
  private final String scope;
  private final DeliveryKeyExtractor keys;

  /**
   * The work for one delivery, set with either handler: deliveries without a key run one at a time,
   * so a set-based handler gets each of them alone.
   */
  private final DeliveryHandler handler;

  /** The set-based handler, or null when the handler runs per delivery. */
  private final NewDeliveriesHandler newDeliveriesHandler;

  private final int prefetch;
  private final Duration linger;
  private final int maxAttempts;
  private final MissingKeyPolicy missingKeyPolicy;
  private final javax.sql.DataSource dataSourceWithoutDeduplication;
  private final String deadLetterExchange;
  private final Consumer<String> onCancel;
  private final Consumer<Throwable> onFailure;
  private final boolean fingerprintPayloads;
  private final RabbitConsumerListener listener;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  private final BlockingQueue<Delivery> buffer = new LinkedBlockingQueue<>();

  /**
   * Deliveries whose dead letter the broker refused, by delivery tag, and when (System.nanoTime) to
   * requeue them. Requeued at once, such a delivery would come straight back and fail again in a
   * tight loop; left unsettled with no end, it would be lost to a later multiple ack. Worker only.
   */
  private final Map<Long, Long> heldUntil = new LinkedHashMap<>();

  /** Dead letters that could not be published since the last one that could. Worker only. */
  private int deadLetterFailures;

  private volatile boolean running;
  private Channel channel;
  private volatile Channel deadLetterChannel;

  /** Orders the worker's reopening of the dead-letter channel with its closing. */
  private final Object deadLetterChannelLock = new Object();

  private String consumerTag;
  private Thread worker;

  private InboxRabbitConsumer(Builder builder) {
    this.connection = builder.connection;
    this.queue = builder.queue;
    this.inbox = builder.inbox;
    this.scope = InboxKeys.validateScope(builder.scope != null ? builder.scope : builder.queue);
    this.keys = builder.keys;
    this.newDeliveriesHandler = builder.newDeliveriesHandler;
    this.handler =
        builder.handler != null
            ? builder.handler
            : (delivery, tx) -> newDeliveriesHandler.handle(List.of(delivery), tx);
    this.prefetch = builder.prefetch;
    this.linger = builder.linger;
    this.maxAttempts =
        builder.maxAttempts > 0 ? builder.maxAttempts : inbox.settings().maxAttempts();
    this.missingKeyPolicy = builder.missingKeyPolicy;
    this.dataSourceWithoutDeduplication = builder.dataSourceWithoutDeduplication;
    this.deadLetterExchange = builder.deadLetterExchange;
    this.onCancel = builder.onCancel;
    this.onFailure = builder.onFailure;
    this.fingerprintPayloads = builder.fingerprintPayloads;
    this.listener = Listeners.nonThrowing(RabbitConsumerListener.class, builder.listener);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Opens a channel, starts consuming and starts the worker thread. */
  public synchronized InboxRabbitConsumer start() throws IOException {
    if (running) {
      throw new IllegalStateException("already started");
    }
    channel = connection.createChannel();
    channel.basicQos(prefetch);
    if (deadLetterExchange != null) {
      deadLetterChannel = connection.createChannel();
      deadLetterChannel.confirmSelect();
    }
    running = true;
    worker = new Thread(this::work, "inbox-rabbit-" + queue);
    worker.start();
    try {
      consume();
    } catch (IOException | RuntimeException e) {
      // No such queue, say: the caller gets no consumer to close, so nothing may stay behind.
      close();
      throw e;
    }
    return this;
  }

  private void consume() throws IOException {
    consumerTag =
        channel.basicConsume(
            queue,
            false,
            (tag, delivery) -> buffer.add(delivery),
            tag -> {
              log.error(
                  "the broker cancelled the consumer of queue '{}' (was it deleted?);"
                      + " no more deliveries will arrive",
                  queue);
              onCancel.accept(queue);
            },
            (tag, signal) -> {
              // No delivery would arrive again: the consumer stops where it can be seen.
              if (running && !recoversFrom(signal)) {
                stop(signal);
              }
            });
  }

  /**
   * Whether the client will reopen what the signal closed, and this consumer with it: only a lost
   * connection (a hard error the application did not initiate) with automatic recovery on. Never a
   * channel the broker closed (a channel error, a consumer timeout), a connection without recovery,
   * or what the application closed.
   */
  private boolean recoversFrom(ShutdownSignalException signal) {
    return signal.isHardError()
        && !signal.isInitiatedByApplication()
        && connection instanceof Recoverable;
  }

  private void work() {
    try {
      while (running || !buffer.isEmpty()) {
        requeueHeldDeliveries(false);
        List<Delivery> batch = nextBatch();
        if (!batch.isEmpty()) {
          process(batch);
        }
        if (!running) {
          break; // the batch in flight is done; the broker requeues what was never processed
        }
      }
      requeueHeldDeliveries(true);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (running) {
        stop(e); // interrupted by someone other than close()
      }
    } catch (Throwable e) {
      // Going on would leave this batch unacknowledged, held by a live channel, for good.
      stop(e);
    }
  }

  /**
   * Stops the consumer on a failure the worker cannot handle, without waiting on {@link #close()}
   * (which may itself be waiting for the worker).
   */
  private void stop(Throwable cause) {
    if (!failure.compareAndSet(null, cause)) {
      return;
    }
    running = false;
    log.error(
        "the consumer of '{}' stopped on an unexpected failure; its unacknowledged deliveries go"
            + " back to the queue for other consumers",
        queue,
        cause);
    closeChannels();
    try {
      onFailure.accept(cause);
    } catch (RuntimeException e) {
      log.error("the onFailure callback of the consumer of '{}' threw", queue, e);
    }
  }

  /** The first delivery to arrive, then whatever else arrives within the linger. */
  private List<Delivery> nextBatch() throws InterruptedException {
    List<Delivery> batch = new ArrayList<>();
    Delivery first = buffer.poll(100, TimeUnit.MILLISECONDS);
    if (first == null) {
      return batch;
    }
    batch.add(first);
    long deadline = System.nanoTime() + linger.toNanos();
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

  private void process(List<Delivery> batch) throws InterruptedException {
    long start = System.nanoTime();
    int size = batch.size();
    Disposition[] dispositions = new Disposition[size];
    List<BatchItem<Integer>> items = new ArrayList<>(size);
    List<Integer> withoutDeduplication = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      String key;
      try {
        key = keys.keyOf(batch.get(i));
      } catch (Exception e) {
        dispositions[i] = Disposition.invalidKey(e);
        continue;
      }
      String broken = key == null ? null : InboxKeys.brokenRule(key);
      if (key == null && missingKeyPolicy == MissingKeyPolicy.PROCESS_WITHOUT_DEDUPLICATION) {
        withoutDeduplication.add(i);
      } else if (key == null) {
        dispositions[i] =
            Disposition.invalidKey("the delivery has no messageId or idempotency key");
      } else if (broken != null) {
        dispositions[i] = Disposition.invalidKey("invalid idempotency key: " + broken);
      } else {
        byte[] body = batch.get(i).getBody();
        items.add(
            new BatchItem<>(key, fingerprintPayloads ? Fingerprints.ofMessage(body) : null, i));
      }
    }
    try {
      if (!items.isEmpty()) {
        for (ItemResult<Integer> item : execute(batch, items).items()) {
          int i = item.item().payload();
          dispositions[i] = Disposition.of(item, maxAttempts, deliveryCount(batch.get(i)));
          count(item, dispositions[i]);
        }
      }
      for (int i : withoutDeduplication) {
        dispositions[i] = runWithoutDeduplication(batch.get(i));
      }
    } catch (RuntimeException e) {
      // The database is unreachable: nothing committed, so every delivery comes back later.
      log.warn("claiming {} deliveries of '{}' failed; requeueing them", size, queue, e);
      Thread.sleep(500);
      requeueAll(batch);
      return;
    }
    settle(batch, dispositions);
    listener.batch(queue, Duration.ofNanos(System.nanoTime() - start));
  }

  /** Claims the items, whose payloads are their deliveries' indexes in the batch. */
  private BatchResult<Integer> execute(List<Delivery> batch, List<BatchItem<Integer>> items) {
    if (newDeliveriesHandler == null) {
      return inbox.executeBatch(
          scope,
          items,
          BatchFailurePolicy.CONTINUE,
          (item, tx) -> {
            try {
              handler.handle(batch.get(item.payload()), tx);
            } catch (Error e) {
              throw new HandlerError(e);
            }
            return null;
          });
    }
    return inbox.executeBatch(
        scope,
        items,
        BatchFailurePolicy.CONTINUE,
        BatchHandler.setBased(
            (newItems, tx) -> {
              try {
                newDeliveriesHandler.handle(deliveries(batch, newItems), tx);
              } catch (Error e) {
                throw new HandlerError(e);
              }
            }));
  }

  private static List<Delivery> deliveries(List<Delivery> batch, List<BatchItem<Integer>> items) {
    List<Delivery> deliveries = new ArrayList<>(items.size());
    for (BatchItem<Integer> item : items) {
      deliveries.add(batch.get(item.payload()));
    }
    return deliveries;
  }

  /** Counts a claimed delivery by its outcome, and logs a failed attempt that will be retried. */
  private void count(ItemResult<Integer> item, Disposition disposition) {
    switch (item.status()) {
      case COMPLETED -> listener.deliveries(queue, MessageOutcome.NEW, 1);
      case DUPLICATE -> listener.deliveries(queue, MessageOutcome.DUPLICATE, 1);
      case FAILED -> {
        listener.deliveries(queue, MessageOutcome.FAILED, 1);
        if (disposition.action() == Disposition.Action.RETRY) {
          log.warn(
              "delivery {} of '{}' failed attempt {}; requeueing",
              item.key(),
              queue,
              disposition.attempts(),
              disposition.failure());
        }
      }
      default -> {}
    }
  }

  /** A quorum queue's count of earlier deliveries, plus this one; 0 when unknown. */
  private static int deliveryCount(Delivery delivery) {
    Map<String, Object> headers = delivery.getProperties().getHeaders();
    Object count = headers == null ? null : headers.get("x-delivery-count");
    return count instanceof Number n ? n.intValue() + 1 : 0;
  }

  private Disposition runWithoutDeduplication(Delivery delivery) {
    try (java.sql.Connection tx = dataSourceWithoutDeduplication.getConnection()) {
      tx.setAutoCommit(false);
      try {
        handler.handle(delivery, tx);
        requireNotAborted(tx);
        tx.commit();
        return Disposition.settled();
      } catch (Exception | Error e) {
        tx.rollback();
        log.warn("a delivery without key failed; requeueing it", e);
        return Disposition.retry(e);
      }
    } catch (java.sql.SQLException e) {
      log.warn("a delivery without key could not get a connection; requeueing it", e);
      return Disposition.retry(e);
    }
  }

  /**
   * Throws when a statement of the handler failed, even one whose exception the handler caught:
   * PostgreSQL has then aborted the transaction, and its commit would roll back without an error,
   * so the delivery would be acknowledged with no effect.
   */
  private static void requireNotAborted(java.sql.Connection tx) throws java.sql.SQLException {
    try (var statement = tx.createStatement()) {
      statement.execute("SELECT 1");
    }
  }

  /**
   * Acknowledges after the commit: one multiple ack when everything settled and no delivery is
   * held, since a multiple ack would settle the held ones too.
   */
  private void settle(List<Delivery> batch, Disposition[] dispositions)
      throws InterruptedException {
    try {
      boolean allAcked = true;
      long lastTag = 0;
      for (int i = 0; i < batch.size(); i++) {
        allAcked &= dispositions[i].action() == Disposition.Action.SETTLE;
        lastTag = Math.max(lastTag, batch.get(i).getEnvelope().getDeliveryTag());
      }
      if (allAcked && heldUntil.isEmpty()) {
        channel.basicAck(lastTag, true);
        return;
      }
      boolean requeued = false;
      for (int i = 0; i < batch.size(); i++) {
        switch (dispositions[i].action()) {
          case SETTLE -> channel.basicAck(batch.get(i).getEnvelope().getDeliveryTag(), false);
          case DEAD_LETTER -> deadLetter(batch.get(i), dispositions[i]);
          case RETRY -> requeued = true;
        }
      }
      if (requeued) {
        // A short pause so that a failing delivery is not retried in a tight loop.
        Thread.sleep(100);
        for (int i = 0; i < batch.size(); i++) {
          if (dispositions[i].action() == Disposition.Action.RETRY) {
            channel.basicNack(batch.get(i).getEnvelope().getDeliveryTag(), false, true);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      // The channel closed after the commit: the broker redelivers, and the inbox recognises
      // the committed deliveries as duplicates.
      log.warn("acknowledging on '{}' failed; the deliveries will come back", queue, e);
    }
  }

  /**
   * Dead-letters one delivery: rejects it, or publishes it to the dead-letter exchange with
   * confirms and then acks it. A dead letter that could not be published (no such exchange, no
   * confirm) is logged at ERROR and counted as {@code dead_letter_failed}, and its delivery is held
   * unsettled until a backoff ends and then requeued (see {@link #heldUntil}).
   */
  private void deadLetter(Delivery delivery, Disposition disposition)
      throws IOException, InterruptedException {
    long tag = delivery.getEnvelope().getDeliveryTag();
    if (deadLetterExchange == null) {
      channel.basicReject(tag, false);
      deadLettered(delivery, disposition);
      return;
    }
    Map<String, Object> headers = new HashMap<>();
    if (delivery.getProperties().getHeaders() != null) {
      headers.putAll(delivery.getProperties().getHeaders());
    }
    put(headers, DeadLetterHeaders.REASON, disposition.reason().code());
    put(headers, DeadLetterHeaders.DETAIL, disposition.detail());
    put(headers, DeadLetterHeaders.KEY, disposition.key());
    headers.put(DeadLetterHeaders.ATTEMPTS, disposition.attempts());
    headers.put(ORIGINAL_QUEUE_HEADER, queue);
    Throwable failure = disposition.failure();
    put(
        headers,
        DeadLetterHeaders.EXCEPTION_CLASS,
        failure == null ? null : failure.getClass().getName());
    put(
        headers,
        DeadLetterHeaders.EXCEPTION_MESSAGE,
        failure == null ? null : failure.getMessage());
    AMQP.BasicProperties properties = delivery.getProperties().builder().headers(headers).build();
    try {
      Channel publisher = openDeadLetterChannel();
      publisher.basicPublish(
          deadLetterExchange,
          delivery.getEnvelope().getRoutingKey(),
          properties,
          delivery.getBody());
      publisher.waitForConfirmsOrDie(10_000);
    } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
      // waitForConfirmsOrDie closes the channel on a nack or timeout, and the broker closes it
      // for a missing exchange: the next dead letter opens a new one.
      deadLetterFailures++;
      Duration backoff = deadLetterBackoff(deadLetterFailures);
      heldUntil.put(tag, System.nanoTime() + backoff.toNanos());
      listener.deliveries(queue, MessageOutcome.DEAD_LETTER_FAILED, 1);
      log.error(
          "the dead letter of a delivery of '{}' (messageId '{}', {}) could not be published to"
              + " '{}'; the delivery goes back to the queue in {} ms",
          queue,
          delivery.getProperties().getMessageId(),
          disposition.reason().code(),
          deadLetterExchange,
          backoff.toMillis(),
          e);
      return;
    }
    deadLetterFailures = 0;
    channel.basicAck(tag, false);
    deadLettered(delivery, disposition);
  }

  /** Sets the header, replacing one of the same name; a null value leaves it out. */
  private static void put(Map<String, Object> headers, String name, String value) {
    if (value == null) {
      headers.remove(name);
    } else {
      headers.put(name, value);
    }
  }

  private void deadLettered(Delivery delivery, Disposition disposition) {
    listener.deliveries(queue, MessageOutcome.DEAD_LETTERED, 1);
    log.warn(
        "dead-lettered a delivery of '{}' (messageId '{}', {}): {}",
        queue,
        delivery.getProperties().getMessageId(),
        disposition.reason().code(),
        disposition.detail());
  }

  /** 200 ms after the first failure in a row, doubling up to 5 s. */
  private static Duration deadLetterBackoff(int failuresInARow) {
    return Duration.ofMillis(Math.min(5_000, 200L << Math.min(failuresInARow - 1, 5)));
  }

  /**
   * Requeues the held deliveries whose backoff has ended, or all of them. A failed requeue needs no
   * retry: the broker requeues every unsettled delivery when the channel closes.
   */
  private void requeueHeldDeliveries(boolean all) {
    long now = System.nanoTime();
    for (Iterator<Map.Entry<Long, Long>> it = heldUntil.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Long> held = it.next();
      if (all || held.getValue() - now <= 0) {
        it.remove();
        try {
          channel.basicNack(held.getKey(), false, true);
        } catch (IOException | RuntimeException e) {
          log.warn("requeueing a held delivery of '{}' failed", queue, e);
        }
      }
    }
  }

  /**
   * The dead-letter channel in confirm mode, opened again when an earlier failure closed it, but
   * never once the consumer is closing: {@link #closeChannels} might already have run, and the new
   * channel would stay open for good.
   */
  private Channel openDeadLetterChannel() throws IOException {
    synchronized (deadLetterChannelLock) {
      if (!deadLetterChannel.isOpen()) {
        if (!running) {
          throw new IOException(
              "the dead-letter channel closed and the consumer is closing: not opening another");
        }
        deadLetterChannel = connection.createChannel();
        deadLetterChannel.confirmSelect();
      }
      return deadLetterChannel;
    }
  }

  private void requeueAll(List<Delivery> batch) {
    try {
      for (Delivery delivery : batch) {
        channel.basicNack(delivery.getEnvelope().getDeliveryTag(), false, true);
      }
    } catch (IOException | RuntimeException e) {
      log.warn("requeueing on '{}' failed; the broker requeues on channel close", queue, e);
    }
  }

  /** Whether the consumer is started and has neither been closed nor stopped on a failure. */
  public boolean isRunning() {
    return running;
  }

  /** What stopped the consumer, if it stopped on a failure rather than by {@link #close()}. */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure.get());
  }

  /**
   * Finishes the batch in flight and acknowledges it, cancels the consumer and closes the channel;
   * deliveries that were buffered but not processed go back to the queue. Waits up to 30 s for the
   * batch in flight, even when the calling thread is interrupted (its interrupt flag is set again
   * on return): closing the channel under a running batch would fail its acks, and the broker would
   * deliver its deliveries again.
   */
  @Override
  public synchronized void close() {
    if (!running) {
      return;
    }
    running = false;
    awaitWorker();
    closeChannels();
  }

  private void awaitWorker() {
    if (Thread.currentThread() == worker) {
      return; // close() from a handler: the batch in flight is this very call
    }
    boolean interrupted = false;
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MILLIS);
    try {
      while (worker.isAlive()) {
        long remaining = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (remaining <= 0) {
          log.warn(
              "the worker of '{}' did not finish its batch within {} ms; closing its channel",
              queue,
              CLOSE_TIMEOUT_MILLIS);
          return;
        }
        try {
          worker.join(remaining);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void closeChannels() {
    try {
      Channel consuming = channel;
      if (consuming.isOpen()) {
        if (consumerTag != null) {
          consuming.basicCancel(consumerTag);
        }
        consuming.close();
      }
      synchronized (deadLetterChannelLock) {
        Channel deadLetters = deadLetterChannel;
        if (deadLetters != null && deadLetters.isOpen()) {
          deadLetters.close();
        }
      }
    } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
      log.warn("closing the channel of '{}' failed", queue, e);
    }
  }

  /**
   * Configures an {@link InboxRabbitConsumer}: connection, queue, inbox and one handler ({@link
   * #handler} or {@link #newDeliveriesHandler}) are required.
   */
  public static final class Builder {
    private Connection connection;
    private String queue;
    private Inbox inbox;
    private String scope;
    private DeliveryKeyExtractor keys = DeliveryKeyExtractor.messageIdOrHeader();
    private DeliveryHandler handler;
    private NewDeliveriesHandler newDeliveriesHandler;
    private int prefetch = DEFAULT_PREFETCH;
    private Duration linger = Duration.ofMillis(5);
    private int maxAttempts;
    private MissingKeyPolicy missingKeyPolicy = MissingKeyPolicy.DEAD_LETTER;
    private javax.sql.DataSource dataSourceWithoutDeduplication;
    private String deadLetterExchange;
    private Consumer<String> onCancel = queue -> {};
    private Consumer<Throwable> onFailure = failure -> {};
    private boolean fingerprintPayloads = true;
    private RabbitConsumerListener listener = RabbitConsumerListener.NOOP;

    private Builder() {}

    /** A connection; use automatic recovery (the client's default) so the consumer survives. */
    public Builder connection(Connection connection) {
      this.connection = Objects.requireNonNull(connection, "connection");
      return this;
    }

    public Builder queue(String queue) {
      this.queue = Objects.requireNonNull(queue, "queue");
      return this;
    }

    public Builder inbox(Inbox inbox) {
      this.inbox = Objects.requireNonNull(inbox, "inbox");
      return this;
    }

    /** Whose keys these are; defaults to the queue name. */
    public Builder scope(String scope) {
      this.scope = scope;
      return this;
    }

    /** Defaults to {@link DeliveryKeyExtractor#messageIdOrHeader()}. */
    public Builder keyExtractor(DeliveryKeyExtractor keys) {
      this.keys = Objects.requireNonNull(keys, "keys");
      return this;
    }

    /** The work done once per new delivery; set this or {@link #newDeliveriesHandler}. */
    public Builder handler(DeliveryHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * The work done once per batch for all of its new deliveries together, for set-based writes;
     * set this or {@link #handler}.
     */
    public Builder newDeliveriesHandler(NewDeliveriesHandler handler) {
      this.newDeliveriesHandler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * The broker's prefetch ({@code basicQos}) and the largest batch; defaults to {@value
     * #DEFAULT_PREFETCH}. Lower it when competing consumers' batches often touch the same rows.
     */
    public Builder prefetch(int prefetch) {
      if (prefetch < 1 || prefetch > 65_535) {
        throw new IllegalArgumentException("prefetch must be 1..65535, got " + prefetch);
      }
      this.prefetch = prefetch;
      return this;
    }

    /** How long a batch waits for more deliveries after its first; defaults to 5 ms. */
    public Builder linger(Duration linger) {
      if (linger.isNegative()) {
        throw new IllegalArgumentException("linger must not be negative, got " + linger);
      }
      this.linger = linger;
      return this;
    }

    /** Attempts before a delivery is dead-lettered; defaults to the inbox's {@code maxAttempts}. */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** Dead-letter deliveries without a key (the default). */
    public Builder deadLetterDeliveriesWithoutKey() {
      this.missingKeyPolicy = MissingKeyPolicy.DEAD_LETTER;
      this.dataSourceWithoutDeduplication = null;
      return this;
    }

    /**
     * Run deliveries without a key through the handler with no deduplication, in transactions of
     * this data source. Only for effects that are harmless when repeated.
     */
    public Builder processDeliveriesWithoutKeyWithoutDeduplication(
        javax.sql.DataSource dataSource) {
      this.missingKeyPolicy = MissingKeyPolicy.PROCESS_WITHOUT_DEDUPLICATION;
      this.dataSourceWithoutDeduplication = Objects.requireNonNull(dataSource, "dataSource");
      return this;
    }

    /**
     * Republish dead letters to this exchange with reason headers ({@link DeadLetterHeaders} and
     * {@value #ORIGINAL_QUEUE_HEADER}), instead of rejecting them to the queue's own dead-letter
     * exchange.
     */
    public Builder deadLetterExchange(String exchange) {
      this.deadLetterExchange = Objects.requireNonNull(exchange, "exchange");
      return this;
    }

    /** Called with the queue name when the broker cancels the consumer (the queue was deleted). */
    public Builder onCancel(Consumer<String> onCancel) {
      this.onCancel = Objects.requireNonNull(onCancel, "onCancel");
      return this;
    }

    /**
     * Called once, on the worker's thread, when the consumer stops on a failure it cannot handle
     * (see {@link InboxRabbitConsumer}); the consumer is then cancelled and its channel closed.
     * When the broker closed the channel, it is called on the client's consumer dispatch thread.
     */
    public Builder onFailure(Consumer<Throwable> onFailure) {
      this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
      return this;
    }

    /**
     * Whether to fingerprint each delivery's body, so that a key re-sent with a different body is
     * dead-lettered ({@code mismatch}) instead of acknowledged as a duplicate. Defaults to true;
     * turn it off only when a re-send may legitimately carry different bytes.
     */
    public Builder fingerprintPayloads(boolean fingerprintPayloads) {
      this.fingerprintPayloads = fingerprintPayloads;
      return this;
    }

    /**
     * Receives each delivery's outcome and each batch's latency, for metrics. Defaults to a no-op.
     * An exception it throws is logged and ignored: it never stops the consumer.
     */
    public Builder listener(RabbitConsumerListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener must not be null");
      return this;
    }

    /**
     * Publishes the consumer's meters ({@code inbox.rabbit.*}, see {@link
     * MicrometerRabbitConsumerListener}) to this registry. Replaces any {@link #listener}.
     */
    public Builder meterRegistry(MeterRegistry registry) {
      Objects.requireNonNull(registry, "meterRegistry must not be null");
      return listener(new MicrometerRabbitConsumerListener(registry));
    }

    public InboxRabbitConsumer build() {
      Objects.requireNonNull(connection, "connection is required");
      Objects.requireNonNull(queue, "queue is required");
      Objects.requireNonNull(inbox, "inbox is required");
      if ((handler == null) == (newDeliveriesHandler == null)) {
        throw new IllegalArgumentException(
            handler == null
                ? "a handler is required: set handler(...) or newDeliveriesHandler(...)"
                : "set handler(...) or newDeliveriesHandler(...), not both");
      }
      return new InboxRabbitConsumer(this);
    }
  }
}
