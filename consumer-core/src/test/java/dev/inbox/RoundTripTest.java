package dev.inbox;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.spi.BatchClaims;
import dev.inbox.testing.TestDataSources;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How many round trips each operation costs once its statements are prepared on the server, counted
 * as the Sync messages that pgjdbc sends (each one waits for the server's answer).
 *
 * <p>pgjdbc describes a statement once when a parameter has no type (it sends a null timestamp so),
 * and from then on sends a described statement that returns text or bytea columns only after a Sync
 * of what is queued before it: the claim behind the transaction's settings cost two round trips
 * that way. Every operation runs {@link #WARM_UP} times first, past pgjdbc's prepare threshold of
 * 5, on a pool of one connection so that all runs share its prepared statements.
 */
class RoundTripTest extends InboxTestSupport {
  private static final int WARM_UP = 8;
  private static final Logger DRIVER = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

  private final AtomicInteger syncs = new AtomicInteger();
  private final Handler countSyncs =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          if ("FE=> Sync".equals(String.valueOf(record.getMessage()).trim())) {
            syncs.incrementAndGet();
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  /**
   * The Syncs counted when the inbox last rolled a transaction back; see {@link #rollbacksNoted}.
   */
  private final AtomicInteger syncsAtRollback = new AtomicInteger();

  private HikariDataSource oneConnection;
  private Inbox inbox;
  private Level driverLevel;
  private int keys;

  @FunctionalInterface
  private interface Operation {
    void run(String key) throws Exception;
  }

  @BeforeEach
  void oneConnectionAndCountedSyncs() {
    inbox(); // migrates the schema through the shared pool: Flyway needs two connections
    oneConnection = TestDataSources.pool(1);
    inbox =
        Inbox.builder()
            .dataSource(rollbacksNoted(oneConnection))
            .settings(settings().build())
            .migrate(false)
            .build();
    driverLevel = DRIVER.getLevel();
    DRIVER.setLevel(Level.FINEST);
    DRIVER.addHandler(countSyncs);
  }

  @AfterEach
  void restore() {
    DRIVER.removeHandler(countSyncs);
    DRIVER.setLevel(driverLevel);
    inbox.close();
    oneConnection.close();
  }

  /**
   * The data source with every connection's {@code rollback()} noting the Syncs sent before it in
   * {@link #syncsAtRollback}, so that a test can count the round trips of a claim apart from the
   * rollback that ends its transaction.
   */
  private DataSource rollbacksNoted(DataSource dataSource) {
    InvocationHandler connections =
        (proxy, method, args) -> {
          Object result = invoke(dataSource, method, args);
          if (!method.getName().equals("getConnection")) {
            return result;
          }
          Connection connection = (Connection) result;
          return Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (c, m, a) -> {
                if (m.getName().equals("rollback") && a == null) {
                  syncsAtRollback.compareAndSet(-1, syncs.get());
                }
                return invoke(connection, m, a);
              });
        };
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, connections);
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** The round trips of the last of {@code WARM_UP + 1} runs, each on a new key. */
  private int roundTrips(Operation operation) throws Exception {
    for (int i = 0; i < WARM_UP; i++) {
      operation.run("warm-" + keys++);
    }
    syncs.set(0);
    operation.run("measured-" + keys++);
    return syncs.get();
  }

  @Test
  void execute_of_a_new_key_is_one_round_trip_to_reserve_it_and_one_to_record_and_commit()
      throws Exception {
    List<Integer> claims = new ArrayList<>();
    int completions =
        roundTrips(
            key -> {
              inbox.execute(
                  "s",
                  key,
                  new byte[] {7},
                  tx -> {
                    claims.add(syncs.getAndSet(0));
                    return StoredResult.of(201, new byte[] {1});
                  });
            });
    assertThat(claims.get(claims.size() - 1)).as("the reservation").isEqualTo(1);
    assertThat(completions).as("the record inserted with the commit").isEqualTo(1);
  }

  /** The read that answers the replay; the rollback that ends its transaction is not counted. */
  @Test
  void a_replayed_key_is_answered_in_one_round_trip() throws Exception {
    inbox.execute("s", "done", tx -> StoredResult.of(201, new byte[] {1}));
    int replay =
        roundTrips(
            key -> {
              syncsAtRollback.set(-1);
              assertThat(inbox.execute("s", "done", tx -> null).outcome())
                  .isEqualTo(ClaimOutcome.DUPLICATE);
              syncs.set(syncsAtRollback.get());
            });
    assertThat(replay).isEqualTo(1);
  }

  @Test
  void execute_is_the_claim_and_the_commit() throws Exception {
    assertThat(roundTrips(key -> inbox.execute("s", key, tx -> null))).isEqualTo(2);
  }

  @Test
  void a_batch_is_the_claim_and_the_commit() throws Exception {
    int batch =
        roundTrips(
            key -> {
              List<BatchItem<String>> items = new ArrayList<>();
              for (int i = 0; i < 10; i++) {
                items.add(BatchItem.of(key + "-" + i, "payload"));
              }
              inbox.executeBatch("s", items, BatchFailurePolicy.CONTINUE, (item, tx) -> null);
            });
    assertThat(batch).isEqualTo(2);
  }

  @Test
  void a_leased_claim_is_the_claim_and_its_commit() throws Exception {
    assertThat(roundTrips(key -> inbox.leases().claim("s", key, null))).isEqualTo(2);
  }

  @FunctionalInterface
  private interface OnCallersTransaction {
    /** Runs the operation's parts, calling {@code lap} after each one to count it. */
    void run(Connection caller, String key, Runnable lap) throws Exception;
  }

  /**
   * The round trips of each part of the last of {@code WARM_UP + 1} runs, each run on a caller's
   * transaction of the pool's one connection; the statement that begins the transaction and the
   * rollback that ends it are not counted.
   */
  private List<Integer> roundTripsOnCallersTransaction(OnCallersTransaction operation)
      throws Exception {
    List<Integer> parts = new ArrayList<>();
    AtomicInteger partStart = new AtomicInteger();
    try (Connection caller = oneConnection.getConnection()) {
      caller.setAutoCommit(false);
      roundTrips(
          key -> {
            try (Statement statement = caller.createStatement()) {
              statement.execute("SELECT 1");
            }
            parts.clear();
            partStart.set(syncs.get());
            operation.run(
                caller, key, () -> parts.add(syncs.get() - partStart.getAndSet(syncs.get())));
            caller.rollback();
          });
    }
    return parts;
  }

  /**
   * The claim on the caller's transaction (savepoint, lock_timeout kept and set, claim written
   * COMPLETED, lock_timeout restored, savepoint released), then a completion without a result: one
   * update that checks the record is still this transaction's.
   */
  @Test
  void a_joined_claim_of_a_new_key_is_one_round_trip_and_its_completion_one() throws Exception {
    List<Integer> parts =
        roundTripsOnCallersTransaction(
            (caller, key, lap) -> {
              Claim claim = inbox.claim(caller, "s", key, new byte[] {7});
              lap.run();
              assertThat(claim.outcome()).isEqualTo(ClaimOutcome.NEW);
              inbox.complete(caller, claim, null);
              lap.run();
            });
    assertThat(parts).as("the claim, then the completion").containsExactly(1, 1);
  }

  /** A completion with a result stores it: one round trip. */
  @Test
  void a_joined_completion_with_a_result_is_one_round_trip() throws Exception {
    List<Integer> parts =
        roundTripsOnCallersTransaction(
            (caller, key, lap) -> {
              Claim claim = inbox.claim(caller, "s", key, null);
              lap.run();
              inbox.complete(caller, claim, StoredResult.of(201, "made".getBytes(UTF_8)));
              lap.run();
            });
    assertThat(parts).as("the claim, then the result stored").containsExactly(1, 1);
  }

  @Test
  void a_joined_claim_of_a_completed_key_is_one_round_trip() throws Exception {
    inbox.execute("s", "done", tx -> null);
    List<Integer> parts =
        roundTripsOnCallersTransaction(
            (caller, key, lap) -> {
              Claim claim = inbox.claim(caller, "s", "done", null);
              lap.run();
              assertThat(claim.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
            });
    assertThat(parts).containsExactly(1);
  }

  /**
   * A batch claimed on the caller's transaction ({@link dev.inbox.spi.BatchClaims}): the savepoint
   * with the lock timeout, the claim of all keys, the classification of the keys it did not insert
   * (only when there are some), the release: the same round trips for 50 keys as for two.
   */
  @Test
  void a_joined_batch_claim_is_a_few_round_trips_whatever_its_size() throws Exception {
    for (int i = 0; i < 10; i++) {
      inbox.execute("s", "settled-" + i, tx -> null);
    }
    BatchClaims claims = BatchClaims.of(inbox);
    List<Integer> parts =
        roundTripsOnCallersTransaction(
            (caller, key, lap) -> {
              List<String> fresh = new ArrayList<>();
              for (int i = 0; i < 50; i++) {
                fresh.add(key + "-" + i);
              }
              List<Claim> answers = claims.claimAll(caller, "s", fresh, null);
              lap.run();
              assertThat(answers).extracting(Claim::outcome).containsOnly(ClaimOutcome.NEW);
              List<String> mixed = new ArrayList<>();
              for (int i = 0; i < 10; i++) {
                mixed.add("settled-" + i);
                mixed.add(key + "-again-" + i);
              }
              answers = claims.claimAll(caller, "s", mixed, null);
              lap.run();
              assertThat(answers)
                  .extracting(Claim::outcome)
                  .containsExactlyElementsOf(
                      java.util.stream.IntStream.range(0, 20)
                          .mapToObj(i -> i % 2 == 0 ? ClaimOutcome.DUPLICATE : ClaimOutcome.NEW)
                          .toList());
            });
    assertThat(parts)
        .as("50 new keys; then 10 new and 10 settled, classified in one more")
        .containsExactly(3, 4);
  }
}
