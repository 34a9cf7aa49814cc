package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.LongStringHelper;
import dev.inbox.ClaimOutcome;
import dev.inbox.Inbox;
import dev.inbox.spring.ClaimCounter;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.Await;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.retry.MessageRecoverer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;

/**
 * What a RabbitMQ message's key is, and when its message counts as handled. The {@code
 * idempotency-key} header arrives as Spring AMQP's message properties converter left it: a header
 * sent as an AMQP byte array stays a {@code byte[]} (once read with {@code toString()}, its
 * identity "[B@1b2c3d", a new key at every delivery), one sent as a string is decoded leniently
 * (invalid bytes become U+FFFD, so two different keys could become one); the key must come from the
 * bytes, strictly. A listener whose transaction rolls back without an exception (rollback-only) has
 * not handled its message, and one that throws a checked exception (which Spring's default rollback
 * rule commits) must not commit its key: in both cases the message comes back.
 */
@SpringBootTest(
    classes = {
      TestApplication.class,
      RabbitListenerKeyAndRollbackTest.Topology.class,
    },
    properties = {
      "inbox.schema=boot_rabbit_r29",
      "inbox.max-attempts=3",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=3", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=2", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms",
      "spring.rabbitmq.listener.simple.prefetch=1"
    })
class RabbitListenerKeyAndRollbackTest {
  static final String BYTES = TestRabbit.newQueueName("r29-bytes");
  static final String LENIENT = TestRabbit.newQueueName("r29-lenient");
  static final String ROLLBACK_ONLY = TestRabbit.newQueueName("r29-rollback-only");
  static final String CHECKED = TestRabbit.newQueueName("r29-checked");
  static final String DEAD_LETTERS = TestRabbit.newQueueName("r29-dead");

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.r29-bytes", () -> BYTES);
    registry.add("test.queue.r29-lenient", () -> LENIENT);
    registry.add("test.queue.r29-rollback-only", () -> ROLLBACK_ONLY);
    registry.add("test.queue.r29-checked", () -> CHECKED);
  }

  @Configuration(proxyBeanMethods = false)
  static class Topology {
    @Bean
    Queue r29Bytes() {
      return new Queue(BYTES, false, false, true);
    }

    @Bean
    Queue r29Lenient() {
      return new Queue(LENIENT, false, false, true);
    }

    @Bean
    Queue r29RollbackOnly() {
      return new Queue(ROLLBACK_ONLY, false, false, true);
    }

    @Bean
    Queue r29Checked() {
      return new Queue(CHECKED, false, false, true);
    }

    @Bean
    Queue r29DeadLetters() {
      return QueueBuilder.nonDurable(DEAD_LETTERS).expires(600_000).build();
    }

    @Bean
    MessageRecoverer r29Recoverer(RabbitTemplate template, Inbox inbox) {
      return new InboxRepublishMessageRecoverer(template, "", DEAD_LETTERS, inbox);
    }

    @Bean
    ClaimCounter claimCounter() {
      return new ClaimCounter();
    }

    @Bean
    HeaderKeyListeners headerKeyListeners(JdbcTemplate jdbc) {
      return new HeaderKeyListeners(jdbc);
    }
  }

  /** Transactional listeners that write one effect row per call. */
  public static class HeaderKeyListeners {
    final JdbcTemplate jdbc;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger rollbackOnlyCalls = new AtomicInteger();
    final AtomicInteger checkedCalls = new AtomicInteger();

    public HeaderKeyListeners(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_rabbit_r29");
      jdbc.execute("CREATE TABLE IF NOT EXISTS boot_rabbit_r29.effects (queue text, body text)");
    }

    @Transactional
    @RabbitListener(queues = "${test.queue.r29-bytes}")
    public void onBytes(String payload) {
      effect(BYTES, payload);
    }

    @Transactional
    @RabbitListener(queues = "${test.queue.r29-lenient}")
    public void onLenient(String payload) {
      effect(LENIENT, payload);
    }

    /**
     * Its first call marks its transaction rollback-only and returns normally (Spring's documented
     * programmatic rollback): nothing of it commits. Later calls succeed.
     */
    @Transactional
    @RabbitListener(queues = "${test.queue.r29-rollback-only}")
    public void onRollbackOnly(String payload) {
      int call = rollbackOnlyCalls.incrementAndGet();
      effect(ROLLBACK_ONLY, payload);
      if (call == 1) {
        TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
      }
    }

    /**
     * Its first call fails with a checked exception (a downstream call's IOException) before it
     * writes anything; later calls succeed.
     */
    @Transactional
    @RabbitListener(queues = "${test.queue.r29-checked}")
    public void onChecked(String payload) throws java.io.IOException {
      if (checkedCalls.incrementAndGet() == 1) {
        throw new java.io.IOException("the ledger service did not answer");
      }
      effect(CHECKED, payload);
    }

    /** Read through these, not the fields: the bean is a CGLIB proxy of its own class. */
    public int rollbackOnlyCallCount() {
      return rollbackOnlyCalls.get();
    }

    public int checkedCallCount() {
      return checkedCalls.get();
    }

    private void effect(String queue, String payload) {
      calls.incrementAndGet();
      jdbc.update(
          "INSERT INTO boot_rabbit_r29.effects (queue, body) VALUES (?, ?)", queue, payload);
    }
  }

  @Autowired RabbitTemplate rabbit;
  @Autowired ClaimCounter claims;
  @Autowired JdbcTemplate jdbc;
  @Autowired HeaderKeyListeners listeners;
  @Autowired dev.inbox.Inbox inbox;

  /**
   * A listener's first call throws a checked exception: Spring's TransactionInterceptor commits on
   * a checked exception (DefaultTransactionAttribute.rollbackOn: RuntimeException and Error only),
   * and with it the inbox's claim, written COMPLETED. Boot's retry calls the listener again; the
   * claim answers DUPLICATE and the message is acknowledged. The payment never takes effect, no
   * attempt is counted, nothing is dead-lettered.
   */
  @Test
  void a_message_whose_listener_threw_a_checked_exception_is_run_again() throws Exception {
    String key = "pay-" + UUID.randomUUID();
    String body = "checked " + key;
    rabbit.send(
        "",
        CHECKED,
        org.springframework.amqp.core.MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
            .setContentType("text/plain")
            .setMessageId(key)
            .build());
    // The first call's claim and the retry's.
    Await.until(
        "two claims on " + CHECKED, Duration.ofSeconds(60), () -> claims.total(CHECKED) >= 2);
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (effects(CHECKED, body) == 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(effects(CHECKED, body))
        .as(
            "effects of a message whose first listener call threw a checked exception (listener"
                + " calls: %d, claims NEW/DUPLICATE: %d/%d, key now: %s)",
            listeners.checkedCallCount(),
            claims.count(CHECKED, ClaimOutcome.NEW),
            claims.count(CHECKED, ClaimOutcome.DUPLICATE),
            inbox.admin().find(CHECKED, key).map(r -> r.state() + "/" + r.attempts()))
        .isEqualTo(1);
  }

  /**
   * A listener that rolls its transaction back without throwing (setRollbackOnly, then a normal
   * return): Spring rolls back silently, the Completion counts a failed attempt (key FAILED), but
   * the container, seeing a normal return, acknowledges the message. Nothing committed and nothing
   * comes back: the payment is lost. The @Idempotent endpoint answers 500 for the same case
   * (IdempotentEndpoint.end, "marked rollback-only"); the listener interceptor does nothing.
   */
  @Test
  void a_message_whose_listener_transaction_rolled_back_without_an_exception_comes_back()
      throws Exception {
    String key = "pay-" + UUID.randomUUID();
    String body = "rollback-only " + key;
    rabbit.send(
        "",
        ROLLBACK_ONLY,
        org.springframework.amqp.core.MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
            .setContentType("text/plain")
            .setMessageId(key)
            .build());
    Await.until(
        "the listener's first call",
        Duration.ofSeconds(60),
        () -> listeners.rollbackOnlyCallCount() >= 1);
    // Boot's retry runs at 10 ms intervals; a redelivery, if any, comes within seconds.
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (effects(ROLLBACK_ONLY, body) == 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(effects(ROLLBACK_ONLY, body))
        .as(
            "committed effects of the message after its first transaction rolled back without an"
                + " exception (listener calls: %d, key now: %s, messages left on the queue: %d)",
            listeners.rollbackOnlyCallCount(),
            inbox.admin().find(ROLLBACK_ONLY, key).map(r -> r.state() + "/" + r.attempts()),
            RabbitMessages.ready(rabbit, ROLLBACK_ONLY))
        .isEqualTo(1);
  }

  /**
   * A publisher sends one payment twice (a re-send after a lost confirm), its key in the {@code
   * idempotency-key} header as an AMQP byte array (field type 'x', as a gateway copying a Kafka
   * header's bytes sends it). The rabbit-adapter reads byte[] headers as UTF-8; the starter takes
   * {@code byte[].toString()}, a different key at each delivery, so both run: two effects.
   */
  @Test
  void a_payment_resent_with_its_key_header_as_bytes_takes_effect_once() throws Exception {
    String key = "pay-" + UUID.randomUUID();
    String body = "payment " + key;
    for (int i = 0; i < 2; i++) {
      publish(BYTES, Map.of("idempotency-key", key.getBytes(StandardCharsets.UTF_8)), body);
    }
    Await.until("two claims on " + BYTES, Duration.ofSeconds(90), () -> claims.total(BYTES) >= 2);
    assertThat(effects(BYTES, body))
        .as(
            "effects of one payment sent twice with idempotency-key header bytes '%s' (keys"
                + " recorded: %s)",
            key,
            jdbc.queryForList(
                "SELECT key FROM boot_rabbit_r29.inbox WHERE scope = ?", String.class, BYTES))
        .isEqualTo(1);
    assertThat(claims.count(BYTES, ClaimOutcome.DUPLICATE))
        .as("the re-send answered as a duplicate")
        .isEqualTo(1);
  }

  /**
   * Two different payments whose header bytes differ only in an invalid UTF-8 byte (0xFF, 0xFE) and
   * whose bodies are the same (same amount, same payee). The rabbit-adapter refuses both as invalid
   * UTF-8; the starter decodes both to the same key ending in U+FFFD, so the second is answered
   * DUPLICATE of the first and acknowledged without running: a lost payment.
   */
  @Test
  void two_payments_whose_key_headers_differ_in_invalid_utf8_are_never_one_key() throws Exception {
    String prefix = "pay-" + UUID.randomUUID() + "-";
    String body = "10.00 EUR to ACME";
    byte[] first = withLastByte(prefix, (byte) 0xFF);
    byte[] second = withLastByte(prefix, (byte) 0xFE);
    publish(LENIENT, Map.of("idempotency-key", LongStringHelper.asLongString(first)), body);
    Await.until(
        "the first payment settled",
        Duration.ofSeconds(90),
        () -> claims.total(LENIENT) >= 1 || deadLetters(prefix) >= 1);
    int deadBefore = deadLetters(prefix);
    publish(LENIENT, Map.of("idempotency-key", LongStringHelper.asLongString(second)), body);
    Await.until(
        "the second payment settled",
        Duration.ofSeconds(90),
        () ->
            claims.total(LENIENT) >= 2
                || deadLetters(prefix) > deadBefore
                || effects(LENIENT, body) >= 2);
    assertThat(claims.count(LENIENT, ClaimOutcome.DUPLICATE))
        .as(
            "claims of the second payment (key header bytes ending 0xFE) answered DUPLICATE of the"
                + " first (0xFF): acknowledged without running")
        .isZero();
  }

  private static byte[] withLastByte(String prefix, byte last) {
    byte[] ascii = prefix.getBytes(StandardCharsets.US_ASCII);
    byte[] bytes = new byte[ascii.length + 1];
    System.arraycopy(ascii, 0, bytes, 0, ascii.length);
    bytes[ascii.length] = last;
    return bytes;
  }

  private void publish(String queue, Map<String, Object> headers, String body) {
    AMQP.BasicProperties properties =
        new AMQP.BasicProperties.Builder().contentType("text/plain").headers(headers).build();
    rabbit.execute(
        channel -> {
          channel.basicPublish("", queue, properties, body.getBytes(StandardCharsets.UTF_8));
          return null;
        });
  }

  /** Dead letters whose x-inbox-key or original header starts with the prefix, drained. */
  private final AtomicInteger deadSeen = new AtomicInteger();

  private int deadLetters(String prefix) {
    Message dead;
    while ((dead = rabbit.receive(DEAD_LETTERS, 100)) != null) {
      Object header = dead.getMessageProperties().getHeaders().get("idempotency-key");
      if (header != null && String.valueOf(header).startsWith(prefix)) {
        deadSeen.incrementAndGet();
      }
    }
    return deadSeen.get();
  }

  private int effects(String queue, String body) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM boot_rabbit_r29.effects WHERE queue = ? AND body = ?",
        Integer.class,
        queue,
        body);
  }
}
