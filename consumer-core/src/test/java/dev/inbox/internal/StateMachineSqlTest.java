package dev.inbox.internal;

import static dev.inbox.RecordState.COMPLETED;
import static dev.inbox.RecordState.FAILED;
import static dev.inbox.RecordState.IN_PROGRESS;
import static dev.inbox.internal.StateMachine.Condition.BELOW_MAX_ATTEMPTS;
import static dev.inbox.internal.StateMachine.Condition.COMPLETED_BEFORE_RETENTION;
import static dev.inbox.internal.StateMachine.Condition.LEASE_EXPIRED;
import static dev.inbox.internal.StateMachine.Condition.LEASE_HELD;
import static dev.inbox.internal.StateMachine.Condition.NO_LEASE;
import static dev.inbox.internal.StateMachine.Condition.WRITTEN_BEFORE_RETENTION;
import static dev.inbox.internal.StateMachine.Condition.WRITTEN_NOW;
import static dev.inbox.internal.StateMachine.NO_RECORD;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.ClaimOutcome;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import dev.inbox.internal.StateMachine.Condition;
import dev.inbox.internal.StateMachine.Transition;
import dev.inbox.testing.TestDataSources;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Pins the SQL to the state machine's table, not the table to itself: every write of {@link
 * Statements} runs, as the inbox binds it, on a key whose row is in each situation below, and the
 * row must move exactly when one of the statement's transitions allows it (its from-state and
 * conditions hold) and to that transition's state, and otherwise stay as it was, byte for byte.
 * Each situation lists the conditions that hold for it by hand, independently of their SQL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StateMachineSqlTest {
  private static final String SCOPE = "sm";
  private static final String KEY = "k-1";
  private static final long FENCING_TOKEN = 7;
  private static final int MAX_ATTEMPTS = 3;
  private static final Duration RETENTION = Duration.ofDays(1);
  private static final StoredResult RESULT =
      StoredResult.of(201, "done".getBytes(StandardCharsets.UTF_8));

  /** A key's row before the statement: its state, and the conditions that hold for it. */
  private enum Situation {
    NONE(NO_RECORD, 0, null, null),
    LEASE_LIVE(IN_PROGRESS, 1, "1 hour", "1 minute", LEASE_HELD, BELOW_MAX_ATTEMPTS),
    LEASE_EXPIRED_PAST_RETENTION(
        IN_PROGRESS,
        1,
        "-1 hour",
        "2 days",
        LEASE_EXPIRED,
        BELOW_MAX_ATTEMPTS,
        WRITTEN_BEFORE_RETENTION),
    LEASE_EXPIRED_GAVE_UP(
        IN_PROGRESS, MAX_ATTEMPTS, "-1 hour", "2 days", LEASE_EXPIRED, WRITTEN_BEFORE_RETENTION),
    COMMITTED_WITHOUT_COMPLETE(IN_PROGRESS, 1, null, "1 minute", NO_LEASE, BELOW_MAX_ATTEMPTS),
    COMMITTED_WITHOUT_COMPLETE_PAST_RETENTION(
        IN_PROGRESS, 1, null, "2 days", NO_LEASE, BELOW_MAX_ATTEMPTS, WRITTEN_BEFORE_RETENTION),
    DONE(COMPLETED, 1, null, "1 minute", NO_LEASE, BELOW_MAX_ATTEMPTS),
    /** Written COMPLETED by a claim of this very transaction. */
    DONE_NOW(COMPLETED, 1, null, "0 seconds", NO_LEASE, BELOW_MAX_ATTEMPTS, WRITTEN_NOW),
    DONE_PAST_RETENTION(
        COMPLETED,
        1,
        null,
        "2 days",
        NO_LEASE,
        BELOW_MAX_ATTEMPTS,
        COMPLETED_BEFORE_RETENTION,
        WRITTEN_BEFORE_RETENTION),
    FAILED_ONCE(FAILED, 1, null, "1 minute", NO_LEASE, BELOW_MAX_ATTEMPTS),
    FAILED_PAST_RETENTION(
        FAILED, 1, null, "2 days", NO_LEASE, BELOW_MAX_ATTEMPTS, WRITTEN_BEFORE_RETENTION),
    GAVE_UP(FAILED, MAX_ATTEMPTS, null, "1 minute", NO_LEASE);

    final RecordState state;
    final int attempts;

    /** How far the lease's end lies ahead (negative: behind), or null without a lease. */
    final String lease;

    /** How long ago the row was written (and completed). */
    final String age;

    final Set<Condition> holds;

    Situation(RecordState state, int attempts, String lease, String age, Condition... holds) {
      this.state = state;
      this.attempts = attempts;
      this.lease = lease;
      this.age = age;
      this.holds =
          holds.length == 0 ? EnumSet.noneOf(Condition.class) : EnumSet.of(holds[0], holds);
    }

    /** What the table says: the transition's from-state and every condition it needs. */
    boolean allows(Transition transition) {
      return transition.from() == state && holds.containsAll(transition.conditions());
    }
  }

  private interface Binder {
    void bind(Connection connection, PreparedStatement ps) throws SQLException;
  }

  /** One write of {@link Statements}, bound as the inbox binds it, and the moves it may make. */
  private record Write(String name, String sql, Binder binder, Transition... transitions) {}

  private HikariDataSource dataSource;
  private String table;
  private Statements sql;

  @BeforeAll
  void createTable() {
    dataSource = TestDataSources.pool(2);
    String schema = TestDataSources.newSchema("sm");
    InboxSettings settings =
        InboxSettings.builder()
            .schema(schema)
            .maxAttempts(MAX_ATTEMPTS)
            .retention(RETENTION)
            .janitorInterval(Duration.ZERO)
            .build();
    InboxSchema.migrate(dataSource, settings);
    table = settings.qualifiedTable();
    sql = new Statements(settings);
  }

  @AfterAll
  void closePool() {
    dataSource.close();
  }

  private List<Write> writes() {
    List<Write> writes = new ArrayList<>();
    for (RecordState writtenAs : List.of(IN_PROGRESS, COMPLETED)) {
      boolean leased = writtenAs == IN_PROGRESS;
      String owner = leased ? "owner-b" : null;
      String duration = leased ? "PT30S" : null;
      Transition[] claims =
          leased
              ? new Transition[] {Transition.CLAIM, Transition.RETRY, Transition.TAKE_OVER}
              : new Transition[] {
                Transition.CLAIM_COMPLETED,
                Transition.RETRY_COMPLETED,
                Transition.TAKE_OVER_COMPLETED
              };
      Transition insert = claims[0];
      writes.add(
          new Write(
              "claim as " + writtenAs,
              sql.claim,
              (c, ps) -> {
                ps.setString(1, SCOPE);
                newRowValues(ps, 2, writtenAs, owner, duration);
                ps.setArray(6, c.createArrayOf("text", new String[] {KEY}));
                ps.setArray(7, c.createArrayOf("bytea", new byte[][] {null}));
                ps.setInt(8, MAX_ATTEMPTS);
                ps.setInt(9, MAX_ATTEMPTS);
              },
              claims));
      Binder single =
          (c, ps) -> {
            ps.setString(1, SCOPE);
            ps.setString(2, KEY);
            ps.setString(3, SCOPE);
            ps.setString(4, KEY);
            ps.setBytes(5, null);
            newRowValues(ps, 6, writtenAs, owner, duration);
          };
      writes.add(new Write("insertOrRead as " + writtenAs, sql.insertOrRead, single, insert));
      writes.add(
          new Write("insertUnlessSeen as " + writtenAs, sql.insertUnlessSeen, single, insert));
      writes.add(
          new Write(
              "insertUnlessSeenMany as " + writtenAs,
              sql.insertUnlessSeenMany,
              (c, ps) -> {
                ps.setArray(1, c.createArrayOf("text", new String[] {KEY}));
                ps.setString(2, SCOPE);
                ps.setString(3, SCOPE);
                newRowValues(ps, 4, writtenAs, owner, duration);
                ps.setArray(8, c.createArrayOf("text", new String[] {KEY}));
                ps.setArray(9, c.createArrayOf("bytea", new byte[][] {null}));
              },
              insert));
    }
    Binder completion =
        (c, ps) -> {
          Rows.setResult(c, ps, 1, RESULT);
          ps.setString(5, SCOPE);
          ps.setString(6, KEY);
          ps.setLong(7, FENCING_TOKEN);
        };
    writes.add(new Write("complete", sql.complete, completion, Transition.COMPLETE));
    writes.add(new Write("storeResult", sql.storeResult, completion, Transition.STORE_RESULT));
    writes.add(
        new Write(
            "completeMany",
            sql.completeMany,
            (c, ps) -> {
              ps.setString(1, SCOPE);
              ps.setArray(2, c.createArrayOf("text", new String[] {KEY}));
            },
            Transition.COMPLETE));
    writes.add(
        new Write(
            "failInTransaction",
            sql.failInTransaction,
            (c, ps) -> {
              ps.setString(1, "boom");
              ps.setString(2, SCOPE);
              ps.setString(3, KEY);
            },
            Transition.FAIL));
    writes.add(new Write("failLease", sql.failLease, byLeaseOwner("boom"), Transition.FAIL));
    writes.add(new Write("renewLease", sql.renewLease, byLeaseOwner("PT30S"), Transition.RENEW));
    writes.add(
        new Write(
            "recordFailure",
            sql.recordFailure,
            (c, ps) -> {
              ps.setString(1, SCOPE);
              ps.setString(2, KEY);
              ps.setBytes(3, null);
              ps.setInt(4, 1);
              ps.setString(5, "boom");
            },
            Transition.COUNT_FAILURE,
            Transition.COUNT_FAILURE_AGAIN,
            Transition.COUNT_FAILURE_OF_EXPIRED_LEASE));
    Binder byKey =
        (c, ps) -> {
          ps.setString(1, SCOPE);
          ps.setString(2, KEY);
        };
    writes.add(
        new Write(
            "release", sql.release, byKey, Transition.RELEASE, Transition.RELEASE_EXPIRED_LEASE));
    writes.add(
        new Write(
            "releaseForced",
            sql.releaseForced,
            byKey,
            Transition.RELEASE,
            Transition.RELEASE_EXPIRED_LEASE,
            Transition.RELEASE_LIVE_LEASE));
    Binder settlement =
        (c, ps) -> {
          Rows.setResult(c, ps, 1, RESULT);
          ps.setString(5, SCOPE);
          ps.setString(6, KEY);
        };
    writes.add(
        new Write(
            "settle", sql.settle, settlement, Transition.SETTLE, Transition.SETTLE_EXPIRED_LEASE));
    writes.add(
        new Write(
            "settleForced",
            sql.settleForced,
            settlement,
            Transition.SETTLE,
            Transition.SETTLE_EXPIRED_LEASE,
            Transition.SETTLE_LIVE_LEASE));
    writes.add(
        new Write(
            "settleNew",
            sql.settleNew,
            (c, ps) -> {
              ps.setString(1, SCOPE);
              ps.setString(2, KEY);
              Rows.setResult(c, ps, 3, RESULT);
            },
            Transition.SETTLE_NEW));
    Binder purge =
        (c, ps) -> {
          ps.setString(1, RETENTION.toString());
          ps.setInt(2, 100);
        };
    writes.add(new Write("purge", sql.purge, purge, Transition.PURGE));
    writes.add(
        new Write(
            "purgeCommittedWithoutComplete",
            sql.purgeCommittedWithoutComplete,
            purge,
            Transition.PURGE_COMMITTED_WITHOUT_COMPLETE));
    Binder reservation =
        (c, ps) -> {
          ps.setString(1, SCOPE);
          ps.setString(2, KEY);
          ps.setBytes(3, null);
          Rows.setResult(c, ps, 4, RESULT);
        };
    writes.add(
        new Write(
            "insertCompleted", sql.insertCompleted, reservation, Transition.COMPLETE_RESERVATION));
    writes.add(
        new Write(
            "insertCompletedAndCommit",
            sql.insertCompletedAndCommit,
            reservation,
            Transition.COMPLETE_RESERVATION));
    return writes;
  }

  /** Binds a value (the error, the lease's duration), then the key and the lease's token. */
  private static Binder byLeaseOwner(String value) {
    return (c, ps) -> {
      ps.setString(1, value);
      ps.setString(2, SCOPE);
      ps.setString(3, KEY);
      ps.setLong(4, FENCING_TOKEN);
    };
  }

  /** Binds {@code NEW_ROW_VALUES} as {@link Claimer} does. */
  private static void newRowValues(
      PreparedStatement ps, int index, RecordState writtenAs, String owner, String duration)
      throws SQLException {
    ps.setString(index, writtenAs.name());
    ps.setString(index + 1, owner);
    ps.setString(index + 2, duration);
    ps.setString(index + 3, writtenAs.name());
  }

  @Test
  void every_write_moves_a_row_exactly_when_the_table_allows_it() throws Exception {
    List<Write> writes = writes();
    Set<Transition> performed = EnumSet.noneOf(Transition.class);
    Set<Transition> seenMoving = EnumSet.noneOf(Transition.class);
    SoftAssertions softly = new SoftAssertions();
    try (Connection c = dataSource.getConnection()) {
      for (Write write : writes) {
        performed.addAll(List.of(write.transitions()));
        for (Situation situation : Situation.values()) {
          List<Transition> allowed =
              List.of(write.transitions()).stream().filter(situation::allows).toList();
          assertThat(allowed)
              .as("%s makes at most one move from %s", write.name(), situation)
              .hasSizeLessThanOrEqualTo(1);
          Transition expected = allowed.isEmpty() ? null : allowed.get(0);
          String[] before;
          String[] after;
          SQLException refused = null;
          // The row is written in the statement's transaction, as a claim's row is before the
          // completion that stores its result (WRITTEN_NOW).
          c.setAutoCommit(false);
          put(c, situation);
          try {
            before = row(c);
            Savepoint savepoint = c.setSavepoint();
            try (PreparedStatement ps = c.prepareStatement(write.sql())) {
              write.binder().bind(c, ps);
              ps.execute();
            } catch (SQLException e) {
              c.rollback(savepoint);
              refused = e;
            }
            after = row(c);
          } finally {
            c.rollback();
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
              s.execute("DELETE FROM " + table);
            }
          }
          String what = write.name() + " from " + situation;
          if (expected == null) {
            softly
                .assertThat(after)
                .as("%s: no transition allows it, so the row stays as it was", what)
                .isEqualTo(before);
          } else {
            seenMoving.add(expected);
            softly.assertThat((Throwable) refused).as("%s: %s allows it", what, expected).isNull();
            softly
                .assertThat(after)
                .as("%s: the row moved by %s", what, expected)
                .isNotEqualTo(before);
            softly
                .assertThat(after == null ? null : after[1])
                .as("%s: the state %s leads to", what, expected)
                .isEqualTo(expected.to() == null ? null : expected.to().name());
          }
        }
      }
    }
    softly.assertAll();
    assertThat(performed)
        .as("every transition is made by some write")
        .containsExactlyInAnyOrder(Transition.values());
    assertThat(seenMoving)
        .as("every transition moved a row in some situation")
        .containsExactlyInAnyOrder(Transition.values());
  }

  @Test
  void a_claim_answers_new_exactly_where_the_table_lets_a_claim_take_the_key() throws Exception {
    SoftAssertions softly = new SoftAssertions();
    try (Connection c = dataSource.getConnection()) {
      for (Situation situation : Situation.values()) {
        put(c, situation);
        ClaimOutcome outcome;
        try (PreparedStatement ps = c.prepareStatement(sql.selectClaimState)) {
          ps.setString(1, SCOPE);
          ps.setArray(2, c.createArrayOf("text", new String[] {KEY}));
          try (ResultSet rs = ps.executeQuery()) {
            outcome =
                rs.next()
                    ? StateMachine.classify(
                        Rows.state(rs),
                        rs.getInt("attempts"),
                        false,
                        Rows.leaseLive(rs),
                        MAX_ATTEMPTS)
                    : StateMachine.classify(NO_RECORD, 0, false, null, MAX_ATTEMPTS);
          }
        } finally {
          try (Statement s = c.createStatement()) {
            s.execute("DELETE FROM " + table);
          }
        }
        boolean claimable =
            situation.allows(Transition.CLAIM)
                || situation.allows(Transition.RETRY)
                || situation.allows(Transition.TAKE_OVER);
        softly
            .assertThat(outcome == ClaimOutcome.NEW)
            .as("%s answers %s", situation, outcome)
            .isEqualTo(claimable);
      }
    }
    softly.assertAll();
  }

  /** Writes the key's row in the situation, on the connection's current transaction. */
  private void put(Connection c, Situation situation) throws SQLException {
    if (situation.state == NO_RECORD) {
      return;
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + table
                + " (scope, key, state, attempts, lease_owner, fencing_token, locked_until,"
                + " created_at, updated_at, completed_at) VALUES (?, ?, ?, ?, ?, ?,"
                + " now() + ?::interval, now() - ?::interval, now() - ?::interval,"
                + " CASE WHEN ? THEN now() - ?::interval END)")) {
      ps.setString(1, SCOPE);
      ps.setString(2, KEY);
      ps.setString(3, situation.state.name());
      ps.setInt(4, situation.attempts);
      ps.setString(5, situation.lease == null ? null : "owner-a");
      ps.setLong(6, FENCING_TOKEN);
      ps.setString(7, situation.lease);
      ps.setString(8, situation.age);
      ps.setString(9, situation.age);
      ps.setBoolean(10, situation.state == COMPLETED);
      ps.setString(11, situation.age);
      ps.executeUpdate();
    }
  }

  /** The key's row version and state, then every column as text; null when there is none. */
  private String[] row(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT r.ctid::text, r.state, row_to_json(r)::text FROM "
                + table
                + " AS r WHERE scope = ? AND key = ?")) {
      ps.setString(1, SCOPE);
      ps.setString(2, KEY);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new String[] {rs.getString(1), rs.getString(2), rs.getString(3)} : null;
      }
    }
  }
}
