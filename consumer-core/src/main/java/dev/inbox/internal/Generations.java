package dev.inbox.internal;

import static dev.inbox.RecordState.COMPLETED;
import static dev.inbox.RecordState.FAILED;
import static dev.inbox.RecordState.IN_PROGRESS;
import static dev.inbox.internal.StateMachine.Transition.PURGE;
import static dev.inbox.internal.StateMachine.Transition.PURGE_COMMITTED_WITHOUT_COMPLETE;

import dev.inbox.InboxSettings;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rotation and retention of a partitioned inbox's generations (docs/scale.md, "Rotation" and
 * "Retention"). A rotation attaches the next generation's partition and makes it the write
 * generation only once no backend can still route rows by a list of partitions that lacks it: it
 * waits for the transactions that held a lock on the table after the attach, invalidates every
 * backend's cached list of the table's partitions once more, and waits again. A retirement carries
 * the rows the plain table would keep over to the write generation, detaches the partition
 * concurrently and drops it.
 *
 * <p>Every step is decided from the catalog and {@code <table>_generations}, never from memory, so
 * that a pass killed at any point is finished by the next. Passes of all nodes take turns under one
 * session-level advisory lock.
 */
final class Generations {
  private static final Logger log = LoggerFactory.getLogger(Generations.class);
  private static final long POLL_MILLIS = 20;

  /**
   * The most rows one transaction of the carry-over moves, and so the most key locks it holds at
   * once: as many as a large batch of new keys holds, a small part of the shared lock table
   * (max_locks_per_transaction x max_connections, 6 400 with PostgreSQL's defaults).
   */
  static final int CARRY_OVER_CHUNK = 500;

  /** Takes the advisory lock of each name in a list, in the list's order. */
  private static final String LOCK_IN_LIST_ORDER =
      "SELECT count(pg_advisory_xact_lock(hashtextextended(u.name, 0))) FROM (SELECT name FROM"
          + " unnest(?::text[]) WITH ORDINALITY AS n (name, i) ORDER BY i) AS u";

  /** The carry-over's cursor, one per pass: passes of all nodes take turns under the pass lock. */
  private static final String KEPT_ROWS_CURSOR = "inbox_kept_rows";

  private final DataSource dataSource;
  private final InboxSettings settings;
  private final String parent;
  private final String generations;
  private final String passLockName;
  private final String keptRows;
  private final String keyLockNamespace;

  Generations(DataSource dataSource, InboxSettings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
    this.parent = settings.qualifiedTable();
    this.generations = '"' + settings.schema() + "\".\"" + settings.table() + "_generations\"";
    this.passLockName = settings.schema() + "." + settings.table() + '\u001f' + "generations";
    this.keptRows = keptRows();
    this.keyLockNamespace = Statements.keyLockNamespace(settings);
  }

  /** Where a generation's partition stands; a killed retirement leaves any of them. */
  enum PartitionState {
    ATTACHED,
    PENDING_DETACH,
    DETACHED,
    MISSING
  }

  /**
   * The janitor's pass: a rotation when the write generation started at least a quarter of the
   * retention ago by the database's clock, then the retirement of every generation whose successor
   * started more than the retention ago. Skipped when another node's pass runs.
   *
   * @return the rows dropped with retired generations
   */
  long pass() throws SQLException {
    try (Connection connection = Transactions.autoCommitted(dataSource)) {
      if (!tryLockPass(connection)) {
        return 0;
      }
      try {
        if (rotationDue(connection)) {
          rotate(connection, true);
        }
        return retire(connection);
      } finally {
        unlockPass(connection);
      }
    }
  }

  /**
   * Starts the next generation now, whatever the current one's age. With {@code
   * waitForOlderTransactions} false the write generation switches at once: only for tests that show
   * what the key guard does on its own.
   *
   * @return whether the write generation switched; false when transactions older than the attach
   *     outlived lockTimeout (the next rotation finishes it)
   */
  boolean rotate(boolean waitForOlderTransactions) throws SQLException {
    try (Connection connection = Transactions.autoCommitted(dataSource)) {
      lockPass(connection);
      try {
        return rotate(connection, waitForOlderTransactions);
      } finally {
        unlockPass(connection);
      }
    }
  }

  /** Retires every generation due, as {@link #pass} does, without rotating. */
  long retire() throws SQLException {
    try (Connection connection = Transactions.autoCommitted(dataSource)) {
      lockPass(connection);
      try {
        return retire(connection);
      } finally {
        unlockPass(connection);
      }
    }
  }

  private boolean rotationDue(Connection connection) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT started_at <= now() - ?::interval FROM "
                + generations
                + " ORDER BY generation DESC LIMIT 1")) {
      ps.setString(1, settings.retention().dividedBy(4).toString());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private boolean rotate(Connection connection, boolean waitForOlderTransactions)
      throws SQLException {
    int next = writeGeneration(connection) + 1;
    if (state(connection, next) != PartitionState.ATTACHED) {
      // SHARE UPDATE EXCLUSIVE on the parent, which no claim's lock conflicts with; CREATE TABLE
      // ... PARTITION OF would take ACCESS EXCLUSIVE and queue every claim behind it.
      inTransaction(
          connection,
          "CREATE TABLE IF NOT EXISTS "
              + partition(next)
              + " (LIKE "
              + parent
              + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)",
          "ALTER TABLE "
              + parent
              + " ATTACH PARTITION "
              + partition(next)
              + " FOR VALUES IN ("
              + next
              + ")");
    }
    if (waitForOlderTransactions && !olderTransactionsEnded(connection, next)) {
      return false;
    }
    // A backend whose list of partitions was read from the catalog before the attach committed
    // but stored after the backend had read the attach's invalidation keeps that list, without
    // the new partition, across its transactions; the wait above only ended the transaction that
    // built it. Such a build runs under a lock on the table taken before the attach, so it has
    // ended now: invalidate every backend's list once more, and wait for the transactions that
    // may still be using a stale one (docs/scale.md, "The catalog snapshot").
    inTransaction(connection, invalidatePartitionLists());
    if (waitForOlderTransactions && !olderTransactionsEnded(connection, next)) {
      return false;
    }
    try (PreparedStatement ps =
        connection.prepareStatement(
            "INSERT INTO " + generations + " (generation, started_at) VALUES (?, now())")) {
      ps.setInt(1, next);
      ps.executeUpdate();
    }
    log.debug("{} writes to generation {}", parent, next);
    return true;
  }

  /**
   * Waits for the transactions that hold a lock on the table now, as {@link #lockersEnded} does;
   * logs and returns false when one outlived lockTimeout. The next rotation finds the generation's
   * partition attached and does every step after the attach again.
   */
  private boolean olderTransactionsEnded(Connection connection, int next) throws SQLException {
    if (lockersEnded(connection, parent)) {
      return true;
    }
    log.warn(
        "generation {} of {} is attached, but transactions that locked the table before stayed"
            + " open longer than lockTimeout ({}); writes stay in generation {} until a later"
            + " rotation finishes the switch",
        next,
        parent,
        settings.lockTimeout(),
        next - 1);
    return false;
  }

  /**
   * A catalog change of the table that changes nothing but sends every backend an invalidation of
   * its cached description of the table, its list of partitions among them: the generation column's
   * n_distinct on the parent reset, which the inbox never sets. SHARE UPDATE EXCLUSIVE on the
   * parent only, as the attach takes: no claim's lock conflicts with it.
   */
  private String invalidatePartitionLists() {
    return "ALTER TABLE ONLY " + parent + " ALTER COLUMN generation RESET (n_distinct)";
  }

  private long retire(Connection connection) throws SQLException {
    int write = writeGeneration(connection);
    long dropped = 0;
    for (int generation : due(connection)) {
      switch (state(connection, generation)) {
        case ATTACHED -> {
          if (!lockersEnded(connection, partition(generation))) {
            log.warn(
                "generation {} of {} is due for retirement, but a transaction that had it locked"
                    + " stayed open longer than lockTimeout ({}); retrying at the next pass",
                generation,
                parent,
                settings.lockTimeout());
            return dropped;
          }
          OptionalLong carried = carryOver(connection, generation, write);
          if (carried.isEmpty()) {
            return dropped;
          }
          long rows = rowsToDrop(connection, generation, carried.getAsLong());
          if (!detached(connection, generation, "CONCURRENTLY")) {
            return dropped;
          }
          drop(connection, generation);
          dropped += rows;
        }
        case PENDING_DETACH -> {
          // A detach that a kill, a cancel or its lock timeout interrupted in its second
          // transaction.
          if (!detached(connection, generation, "FINALIZE")) {
            return dropped;
          }
          drop(connection, generation);
        }
        case DETACHED, MISSING -> drop(connection, generation);
      }
    }
    return dropped;
  }

  /** Generations whose successor started more than the retention ago, oldest first. */
  private List<Integer> due(Connection connection) throws SQLException {
    List<Integer> due = new ArrayList<>();
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT g.generation FROM "
                + generations
                + " AS g JOIN "
                + generations
                + " AS s ON s.generation = g.generation + 1"
                + " WHERE s.started_at < now() - ?::interval ORDER BY g.generation")) {
      ps.setString(1, settings.retention().toString());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          due.add(rs.getInt(1));
        }
      }
    }
    return due;
  }

  /**
   * Moves every row of the generation that the plain table would not purge to the write generation,
   * in chunks of at most {@value #CARRY_OVER_CHUNK} rows in key order, each chunk a transaction of
   * its own: each moved row's key guard holds the key's advisory lock until its transaction ends,
   * so one transaction for all rows would hold as many locks as the generation keeps rows, more
   * than the shared lock table may hold. Each row moves in one statement, committed in one
   * partition or the other and never in both, and the argument that a claim meets it is per row
   * (docs/scale.md, "Retention"), so chunks commit one by one.
   *
   * <p>The rows to keep are listed once, at the start, by a cursor held across the chunks' commits
   * ({@link #keptRows}), which reads only the partition's partial indexes: a retiring partition is
   * nearly all rows to purge, and reading each of them, once or once per chunk, would cost the
   * retention a scan of the whole partition. A row listed then is moved even if it became one to
   * purge meanwhile (it is purged with a later generation); a row that was one to purge never
   * changes again, so the list misses no row. Returns empty when a row stayed locked past
   * lockTimeout: the chunks before it stay carried over, and the next pass, listing what is left,
   * carries the rest.
   *
   * @return the rows carried over, or empty when it stopped
   */
  OptionalLong carryOver(Connection connection, int generation, int write) throws SQLException {
    long carried = 0;
    try (PreparedStatement declare = connection.prepareStatement(keptRows)) {
      bindKeptRows(declare, generation);
      declare.execute();
    }
    try {
      int chunk;
      do {
        connection.setAutoCommit(false);
        try {
          chunk = carryOverChunk(connection, generation, write);
          connection.commit();
        } catch (SQLException e) {
          connection.rollback();
          if (SqlStates.isLockTimeout(e)) {
            log.warn(
                "carrying generation {} of {} over waited longer than lockTimeout for a row ({}"
                    + " rows carried over before it); retrying at the next pass",
                generation,
                parent,
                carried);
            return OptionalLong.empty();
          }
          throw e;
        } finally {
          connection.setAutoCommit(true);
        }
        carried += chunk;
      } while (chunk == CARRY_OVER_CHUNK);
    } finally {
      closeKeptRows(connection);
    }
    log.debug("carried {} rows of generation {} of {} over", carried, generation, parent);
    return OptionalLong.of(carried);
  }

  /**
   * Closes {@link #keptRows}'s cursor, which would otherwise outlive the pass on a pooled
   * connection and make the next pass's DECLARE fail. A connection too broken to close it is one
   * the pool discards, with the cursor: logged, never thrown over the pass's own failure.
   */
  private void closeKeptRows(Connection connection) {
    try (Statement st = connection.createStatement()) {
      st.execute("CLOSE " + KEPT_ROWS_CURSOR);
    } catch (SQLException e) {
      log.warn("closing the carry-over's cursor on {} failed", parent, e);
    }
  }

  /**
   * Moves the next at most {@value #CARRY_OVER_CHUNK} rows of {@link #keptRows}, in the transaction
   * begun on {@code connection}, by an UPDATE of their generation through the parent, which
   * PostgreSQL performs as a move through the key guard.
   *
   * @return the rows taken from the cursor
   */
  private int carryOverChunk(Connection connection, int generation, int write) throws SQLException {
    List<String> scopes = new ArrayList<>(CARRY_OVER_CHUNK);
    List<String> keys = new ArrayList<>(CARRY_OVER_CHUNK);
    try (Statement st = connection.createStatement()) {
      // READ COMMITTED whatever the pool's default: moving a row fires the key guard, which
      // refuses any other isolation.
      st.execute(
          "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '"
              + settings.lockTimeout().toMillis()
              + "ms'");
      try (ResultSet rs =
          st.executeQuery("FETCH " + CARRY_OVER_CHUNK + " FROM " + KEPT_ROWS_CURSOR)) {
        while (rs.next()) {
          scopes.add(rs.getString(1));
          keys.add(rs.getString(2));
        }
      }
    }
    if (keys.isEmpty()) {
      return 0;
    }
    // Locks as a claim takes them: every key first (the key guard's lock), in key order as a
    // batch takes them, and only then the rows, in the same order, then the moves. A row locked
    // before its key would deadlock with a claim that holds the key and waits for the row.
    List<String> lockNames = new ArrayList<>(keys.size());
    for (int i = 0; i < keys.size(); i++) {
      lockNames.add(Statements.keyLockName(keyLockNamespace, scopes.get(i), keys.get(i)));
    }
    try (PreparedStatement ps = connection.prepareStatement(LOCK_IN_LIST_ORDER)) {
      // The cursor lists the keys in key order; the ordered subquery feeds the aggregate row by
      // row.
      ps.setArray(1, connection.createArrayOf("text", lockNames.toArray()));
      ps.execute();
    }
    try (PreparedStatement ps =
        connection.prepareStatement(
            "WITH locked AS (SELECT r.scope, r.key FROM "
                + parent
                + " AS r JOIN unnest(?::text[], ?::text[]) AS c (scope, key)"
                + " ON r.scope = c.scope AND r.key = c.key WHERE r.generation = ?"
                + " ORDER BY r.scope, r.key FOR UPDATE OF r) UPDATE "
                + parent
                + " AS r SET generation = ? FROM locked AS l"
                + " WHERE r.generation = ? AND r.scope = l.scope AND r.key = l.key")) {
      ps.setArray(1, connection.createArrayOf("text", scopes.toArray()));
      ps.setArray(2, connection.createArrayOf("text", keys.toArray()));
      ps.setInt(3, generation);
      ps.setInt(4, write);
      ps.setInt(5, generation);
      ps.executeUpdate();
    }
    return keys.size();
  }

  /**
   * {@link #carryOver}'s cursor over {@link #keptRowsQuery}. WITH HOLD: materialised by the
   * autocommitted DECLARE, it outlives the chunks' transactions.
   */
  private String keptRows() {
    return "DECLARE " + KEPT_ROWS_CURSOR + " NO SCROLL CURSOR WITH HOLD FOR " + keptRowsQuery();
  }

  /**
   * Binds {@link #keptRowsQuery}'s parameters: the generation three times, the retention thrice.
   */
  void bindKeptRows(PreparedStatement statement, int generation) throws SQLException {
    for (int branch = 1; branch <= 3; branch++) {
      statement.setInt(branch, generation);
      statement.setString(branch + 3, settings.retention().toString());
    }
  }

  /**
   * The keys of the generation's rows that PURGE's and PURGE_COMMITTED_WITHOUT_COMPLETE's guards,
   * negated, keep, in key order; bound by {@link #bindKeptRows}. Each branch names the predicate of
   * one partial index (failed rows, rows in progress, rows completed within the retention), so that
   * each is read from its index; the guards decide among what they return.
   */
  String keptRowsQuery() {
    String rowsOf = "SELECT r.* FROM " + parent + " AS r WHERE r.generation = ? AND ";
    return "SELECT r.scope, r.key FROM ("
        + rowsOf
        + "r.state = '"
        + FAILED
        + "' UNION ALL "
        + rowsOf
        + "r.state = '"
        + IN_PROGRESS
        + "' UNION ALL "
        + rowsOf
        + "r.state = '"
        + COMPLETED
        + "' AND r.completed_at >= now() - ?::interval) AS r WHERE NOT (("
        + PURGE.guard()
        + ") OR ("
        + PURGE_COMMITTED_WITHOUT_COMPLETE.guard()
        + ")) ORDER BY r.scope, r.key";
  }

  /**
   * {@code DETACH PARTITION ... CONCURRENTLY} (or {@code FINALIZE}): SHARE UPDATE EXCLUSIVE, which
   * blocks no claim; it waits for the transactions that may still use the partition, at most
   * lockTimeout, so that a caller's transaction left idle cannot hold the pass (and with it every
   * node's rotation) for ever. Returns false when it waited longer: a detach interrupted in its
   * second transaction stays pending and the next pass finalises it.
   */
  private boolean detached(Connection connection, int generation, String how) throws SQLException {
    try (Statement st = connection.createStatement()) {
      // DETACH ... CONCURRENTLY cannot run in a transaction block: the session's lock_timeout,
      // restored after it.
      String callers;
      try (ResultSet rs = st.executeQuery("SELECT current_setting('lock_timeout')")) {
        rs.next();
        callers = rs.getString(1);
      }
      st.execute("SET lock_timeout = '" + settings.lockTimeout().toMillis() + "ms'");
      try {
        st.execute(
            "ALTER TABLE " + parent + " DETACH PARTITION " + partition(generation) + " " + how);
        return true;
      } catch (SQLException e) {
        if (!SqlStates.isLockTimeout(e)) {
          throw e;
        }
        log.warn(
            "detaching generation {} of {} waited longer than lockTimeout ({}) for a transaction"
                + " that may still use it; finishing at the next pass",
            generation,
            parent,
            settings.lockTimeout());
        return false;
      } finally {
        try (PreparedStatement restore =
            connection.prepareStatement("SELECT set_config('lock_timeout', ?, false)")) {
          restore.setString(1, callers);
          restore.execute();
        }
      }
    }
  }

  /**
   * The rows a retirement drops with the generation, for the purge's count: PostgreSQL's estimate
   * of the partition's rows ({@code pg_class.reltuples}, exact as of its last VACUUM or ANALYZE)
   * less the rows just carried over, since counting them would read the whole partition once more
   * (seconds for millions of rows, which is what partitioning saves). Counted exactly when the
   * partition was never vacuumed nor analysed, which only a small or young one is.
   */
  private long rowsToDrop(Connection connection, int generation, long carried) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT reltuples::bigint FROM pg_catalog.pg_class WHERE oid = ?::text::regclass")) {
      ps.setString(1, partition(generation));
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getLong(1) >= 0) {
          return Math.max(0, rs.getLong(1) - carried);
        }
      }
    }
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM " + partition(generation))) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void drop(Connection connection, int generation) throws SQLException {
    inTransaction(
        connection,
        "DROP TABLE IF EXISTS " + partition(generation),
        "DELETE FROM " + generations + " WHERE generation = " + generation);
    log.debug("retired generation {} of {}", generation, parent);
  }

  /**
   * Waits until every transaction that holds a lock on {@code relation} now has ended, at most
   * lockTimeout. Takes no lock itself, so it blocks nobody.
   */
  private boolean lockersEnded(Connection connection, String relation) throws SQLException {
    String[] holders;
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT array_agg(DISTINCT virtualtransaction) FROM pg_catalog.pg_locks"
                + " WHERE locktype = 'relation' AND relation = ?::text::regclass"
                + " AND database = (SELECT oid FROM pg_catalog.pg_database"
                + " WHERE datname = current_database())"
                + " AND pid IS DISTINCT FROM pg_backend_pid()")) {
      ps.setString(1, relation);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        java.sql.Array array = rs.getArray(1);
        if (array == null) {
          return true;
        }
        holders = (String[]) array.getArray();
      }
    }
    long deadline = System.nanoTime() + settings.lockTimeout().toNanos();
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT count(*) FROM pg_catalog.pg_locks WHERE locktype = 'virtualxid'"
                + " AND virtualxid = ANY(?::text[])")) {
      ps.setArray(1, connection.createArrayOf("text", holders));
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (rs.getLong(1) == 0) {
            return true;
          }
        }
        if (System.nanoTime() > deadline) {
          return false;
        }
        try {
          Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
  }

  int writeGeneration(Connection connection) throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT max(generation) FROM " + generations)) {
      rs.next();
      int generation = rs.getInt(1);
      if (rs.wasNull()) {
        throw new IllegalStateException(
            generations + " has no generation, which indicates a bug (or a hand-made change)");
      }
      return generation;
    }
  }

  PartitionState state(Connection connection, int generation) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT to_regclass(?) IS NOT NULL, (SELECT i.inhdetachpending FROM"
                + " pg_catalog.pg_inherits i WHERE i.inhrelid = to_regclass(?)"
                + " AND i.inhparent = ?::text::regclass)")) {
      ps.setString(1, partition(generation));
      ps.setString(2, partition(generation));
      ps.setString(3, parent);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return PartitionState.MISSING;
        }
        boolean pending = rs.getBoolean(2);
        if (rs.wasNull()) {
          return PartitionState.DETACHED;
        }
        return pending ? PartitionState.PENDING_DETACH : PartitionState.ATTACHED;
      }
    }
  }

  /** {@code "schema"."table_g<N>"}. */
  String partition(int generation) {
    return '"' + settings.schema() + "\".\"" + settings.table() + "_g" + generation + '"';
  }

  private static void inTransaction(Connection connection, String... statements)
      throws SQLException {
    connection.setAutoCommit(false);
    try (Statement st = connection.createStatement()) {
      for (String statement : statements) {
        st.execute(statement);
      }
      connection.commit();
    } catch (SQLException e) {
      connection.rollback();
      throw e;
    } finally {
      connection.setAutoCommit(true);
    }
  }

  private boolean tryLockPass(Connection connection) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT pg_try_advisory_lock(hashtextextended(?, 0))")) {
      ps.setString(1, passLockName);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private void lockPass(Connection connection) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT pg_advisory_lock(hashtextextended(?, 0))")) {
      ps.setString(1, passLockName);
      ps.execute();
    }
  }

  private void unlockPass(Connection connection) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT pg_advisory_unlock(hashtextextended(?, 0))")) {
      ps.setString(1, passLockName);
      ps.execute();
    }
  }
}
