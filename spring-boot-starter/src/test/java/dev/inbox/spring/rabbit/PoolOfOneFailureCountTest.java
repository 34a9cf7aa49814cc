package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.inbox.ClaimOutcome;
import dev.inbox.HandlerFailedException;
import dev.inbox.Inbox;
import dev.inbox.spring.InboxRepublishMessageRecoverer;
import dev.inbox.spring.TestApplication;
import dev.inbox.testing.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
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
import org.springframework.transaction.support.TransactionTemplate;

/**
 * An application whose pool has one connection free, taken by the listener (or the transaction)
 * that fails: the failed attempt is still counted, on that connection once its transaction has
 * rolled back, so the message gives up after {@code inbox.max-attempts}. Counted on a second
 * connection, it waited for the pool's connection timeout and was dropped, and the message was
 * retried until the container's own retries ran out.
 */
@SpringBootTest(
    classes = {TestApplication.class, PoolOfOneFailureCountTest.Topology.class},
    properties = {
      "inbox.schema=boot_pool_of_one",
      "inbox.max-attempts=3",
      // Two: Flyway needs both at startup; each test then holds one, leaving the listener one.
      "spring.datasource.hikari.maximum-pool-size=2",
      "inbox.janitor-interval=0",
      "spring.datasource.hikari.connection-timeout=1000",
      "spring.rabbitmq.listener.simple.retry.enabled=true",
      "spring.rabbitmq.listener.simple.retry.max-attempts=6", // Boot 3
      "spring.rabbitmq.listener.simple.retry.max-retries=5", // Boot 4
      "spring.rabbitmq.listener.simple.retry.initial-interval=10ms",
      "spring.rabbitmq.listener.simple.prefetch=1"
    })
class PoolOfOneFailureCountTest {
  static final String POISON = TestRabbit.newQueueName("pool-one-poison");
  static final String DEAD_LETTERS = TestRabbit.newQueueName("pool-one-dead");

  @DynamicPropertySource
  static void services(DynamicPropertyRegistry registry) {
    TestApplication.database(registry);
    RabbitConnection.register(registry);
    registry.add("test.queue.pool-one-poison", () -> POISON);
  }

  @Configuration(proxyBeanMethods = false)
  static class Topology {
    @Bean
    Queue poolOnePoison() {
      return new Queue(POISON, false, false, true);
    }

    @Bean
    Queue poolOneDeadLetters() {
      return QueueBuilder.nonDurable(DEAD_LETTERS).expires(600_000).build();
    }

    @Bean
    MessageRecoverer poolOneRecoverer(RabbitTemplate template, Inbox inbox) {
      return new InboxRepublishMessageRecoverer(template, "", DEAD_LETTERS, inbox);
    }

    @Bean
    FailingListener failingListener(JdbcTemplate jdbc) {
      return new FailingListener(jdbc);
    }
  }

  /** Writes an effect and fails, every time. */
  public static class FailingListener {
    final JdbcTemplate jdbc;
    final AtomicInteger calls = new AtomicInteger();

    public FailingListener(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
      jdbc.execute("CREATE SCHEMA IF NOT EXISTS boot_pool_of_one");
      jdbc.execute("CREATE TABLE IF NOT EXISTS boot_pool_of_one.effects (body text)");
    }

    @Transactional
    @RabbitListener(queues = "${test.queue.pool-one-poison}")
    public void onPoison(String payload) {
      calls.incrementAndGet();
      jdbc.update("INSERT INTO boot_pool_of_one.effects (body) VALUES (?)", payload);
      throw new IllegalStateException("payment " + payload + " cannot be booked");
    }

    /** Read through this, not the field: the bean is a CGLIB proxy of its own class. */
    public int callCount() {
      return calls.get();
    }
  }

  @Autowired RabbitTemplate rabbit;
  @Autowired FailingListener listener;
  @Autowired Inbox inbox;
  @Autowired JdbcTemplate jdbc;
  @Autowired TransactionTemplate transactions;
  @Autowired DataSource dataSource;
  private Connection heldByTheTest;

  @BeforeEach
  void holdAllButOneConnection() throws SQLException {
    heldByTheTest = dataSource.getConnection();
  }

  @AfterEach
  void release() throws SQLException {
    heldByTheTest.close();
  }

  @Test
  void a_listener_holding_the_pools_only_connection_gives_up_after_max_attempts() {
    String key = "pay-" + UUID.randomUUID();
    rabbit.send(
        "",
        POISON,
        MessageBuilder.withBody(key.getBytes(StandardCharsets.UTF_8))
            .setContentType("text/plain")
            .setMessageId(key)
            .build());
    Message dead = rabbit.receive(DEAD_LETTERS, 60_000);
    assertThat(dead).as("dead-lettered").isNotNull();
    assertThat(dead.getMessageProperties().getHeaders())
        .containsEntry("x-inbox-reason", "gave_up")
        .containsEntry("x-inbox-attempts", 3);
    assertThat(listener.callCount()).as("listener calls").isEqualTo(3);
    assertThat(inbox.admin().find(POISON, key).orElseThrow().attempts()).isEqualTo(3);
    assertThat(
            jdbc.queryForObject(
                "SELECT count(*) FROM boot_pool_of_one.effects WHERE body = ?", Long.class, key))
        .isZero();
  }

  /**
   * The path of an {@code @Idempotent} endpoint: {@code execute} joins the Spring transaction that
   * holds the pool's only connection (here a JpaTransactionManager's, Boot's with JPA present).
   */
  @Test
  void a_joined_execute_holding_the_pools_only_connection_has_each_failure_counted() {
    String key = "req-" + UUID.randomUUID();
    for (int attempt = 1; attempt <= 3; attempt++) {
      assertThatThrownBy(
              () ->
                  transactions.executeWithoutResult(
                      status ->
                          inbox.execute(
                              "api",
                              key,
                              tx -> {
                                throw new IllegalStateException("the ledger refused it");
                              })))
          .isInstanceOf(HandlerFailedException.class);
      assertThat(inbox.admin().find("api", key).orElseThrow().attempts())
          .as("attempt %d counted", attempt)
          .isEqualTo(attempt);
    }
    ClaimOutcome last =
        transactions.execute(status -> inbox.execute("api", key, tx -> null).outcome());
    assertThat(last).isEqualTo(ClaimOutcome.GAVE_UP);
  }
}
