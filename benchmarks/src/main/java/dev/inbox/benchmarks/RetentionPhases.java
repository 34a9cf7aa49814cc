package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Times the steps of one retirement of a partitioned inbox's generation from outside the library: a
 * thread polls {@code pg_stat_activity} every few milliseconds for the retention's statements on
 * the table (the carry-over's UPDATE, the count of the retiring partition, the DETACH, the DROP)
 * and keeps each one's {@code query_start}, the server's own start time. A step shorter than the
 * polling interval may go unseen; the next seen step then starts where it would have.
 *
 * <p>The same polls tell what the other statements (the claims running beside the retention) were
 * doing: each sighting of an active client backend that is not the retention's counts once under
 * its wait event ({@code Lock:relation}, {@code IO:WALSync}, ...) or under {@code CPU} when it
 * waited for nothing. A claim blocked by the retention's locks shows as {@code Lock:*} sightings; a
 * claim slowed by the disk as {@code IO:*}.
 */
final class RetentionPhases implements AutoCloseable {
  /**
   * Each step's statement, as the library writes it: {@code %1$s} the parent, {@code %2$s} a
   * partition's name up to its generation.
   */
  enum Phase {
    /** Its listing of the rows to keep, then its chunks' moves; before be14c87 one UPDATE. */
    CARRY_OVER(
        "DECLARE inbox_kept_rows",
        "WITH locked AS (SELECT r.scope, r.key FROM %1$s",
        "UPDATE %1$s AS r SET generation"),
    /** Before be14c87 only: a count of the partition, now taken from its statistics. */
    COUNT("SELECT count(*) FROM %2$s"),
    DETACH("ALTER TABLE %1$s DETACH PARTITION"),
    DROP("DROP TABLE IF EXISTS %2$s");

    private final String[] prefixes;

    Phase(String... prefixes) {
      this.prefixes = prefixes;
    }
  }

  private static final long POLL_MILLIS = 5;

  private final Connection connection;
  private final String table;
  private final String partitionPrefix;
  private final Map<Phase, Double> starts = new EnumMap<>(Phase.class);
  private final Map<Phase, Double> lastSeen = new EnumMap<>(Phase.class);
  private final Map<String, Long> otherWaits = new TreeMap<>();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final Thread poller;
  private SQLException failure;

  /**
   * @param table the parent as the library names it: {@code "schema"."table"}
   */
  RetentionPhases(DataSource dataSource, String table) throws SQLException {
    this.connection = dataSource.getConnection();
    this.table = table;
    // "schema"."table" -> "schema"."table_g, the start of every partition's name.
    this.partitionPrefix = table.substring(0, table.length() - 1) + "_g";
    this.poller = new Thread(this::poll, "scale-retention-phases");
    poller.start();
  }

  private void poll() {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT extract(epoch FROM query_start)::float8, extract(epoch FROM"
                + " clock_timestamp())::float8, query, coalesce(wait_event_type || ':' ||"
                + " wait_event, 'CPU') FROM pg_catalog.pg_stat_activity"
                + " WHERE datname = current_database() AND state = 'active'"
                + " AND backend_type = 'client backend' AND pid <> pg_backend_pid()")) {
      while (!stop.get()) {
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            if (!record(rs.getDouble(1), rs.getDouble(2), rs.getString(3))) {
              synchronized (otherWaits) {
                otherWaits.merge(rs.getString(4), 1L, Long::sum);
              }
            }
          }
        }
        Thread.sleep(POLL_MILLIS);
      }
    } catch (SQLException e) {
      failure = e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether the statement is one of the retention's: a step's, or the plain table's purge. */
  private boolean record(double queryStart, double now, String query) {
    boolean retention = query.startsWith("DELETE FROM " + table);
    for (Phase phase : Phase.values()) {
      for (String prefix : phase.prefixes) {
        if (query.startsWith(String.format(prefix, table, partitionPrefix))) {
          retention = true;
          synchronized (starts) {
            starts.putIfAbsent(phase, queryStart);
            lastSeen.put(phase, now);
          }
        }
      }
    }
    return retention;
  }

  /**
   * How often the other statements were seen under each wait event ({@code CPU}: none) since this
   * observer started, by polls of {@value #POLL_MILLIS} ms.
   */
  Map<String, Long> otherStatementsWaits() {
    synchronized (otherWaits) {
      return new TreeMap<>(otherWaits);
    }
  }

  /**
   * Seconds of the carry-over, of the count, and of the detach and drop together (DETACH's key, up
   * to the server's clock now), each -1 when not seen. An unseen detach and drop (faster than the
   * polling) are timed from the last sight of the count or, without one, of the carry-over.
   */
  Map<Phase, Double> secondsUntilNow() throws SQLException {
    stop.set(true);
    try {
      poller.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      throw failure;
    }
    double end;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT extract(epoch FROM clock_timestamp())::float8")) {
      rs.next();
      end = rs.getDouble(1);
    }
    Map<Phase, Double> seconds = new EnumMap<>(Phase.class);
    synchronized (starts) {
      for (Phase phase : new Phase[] {Phase.CARRY_OVER, Phase.COUNT}) {
        Double start = starts.get(phase);
        seconds.put(phase, start == null ? -1 : firstStartAfter(phase, end) - start);
      }
      Double detach = starts.get(Phase.DETACH);
      if (detach == null) {
        detach = starts.get(Phase.DROP);
      }
      if (detach == null) {
        detach = lastSeen.get(Phase.COUNT);
      }
      if (detach == null) {
        detach = lastSeen.get(Phase.CARRY_OVER);
      }
      seconds.put(Phase.DETACH, detach == null ? -1 : end - detach);
    }
    return seconds;
  }

  private double firstStartAfter(Phase phase, double end) {
    for (int i = phase.ordinal() + 1; i < Phase.values().length; i++) {
      Double start = starts.get(Phase.values()[i]);
      if (start != null) {
        return start;
      }
    }
    return end;
  }

  @Override
  public void close() throws SQLException {
    stop.set(true);
    connection.close();
  }
}
